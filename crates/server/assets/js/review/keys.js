// @ts-check
/**
 * The keyboard: j/k move between threads, c comments on the selection, d on the document, r
 * replies, e resolves, ? lists the shortcuts, Escape closes what is open, Enter opens a resolved
 * thread. The frame's document sends its keys here too.
 */

import { closeDrawer, composerSlot, isFinalized, root, view } from "./page.js";
import { showToast } from "../app.js";
import { moveActive, scheduleLayout } from "./threads.js";
import { openForm, setExpanded } from "./cards.js";
import { closeComposer, commentOnSelection, openComposer } from "./composer.js";

function isTyping(target) {
  return target instanceof Element && !!target.closest("input, textarea, select, [contenteditable]");
}

function showShortcuts() {
  /** @type {HTMLDialogElement} */ (document.getElementById("shortcuts")).showModal();
}

/** @param {KeyboardEvent} event */
export function onKeyDown(event) {
  if (event.key === "Escape") {
    if (composerSlot.querySelector("form")) return closeComposer(false);
    const open = document.querySelector("#panel form[data-draft-form]:not([hidden])");
    if (open instanceof HTMLFormElement && isTyping(event.target)) {
      open.hidden = true;
      return scheduleLayout();
    }
    if (root.classList.contains("drawer-open")) return closeDrawer();
    return;
  }
  if (event.ctrlKey || event.metaKey || event.altKey || isTyping(event.target)) return;
  // Enter on a resolved thread's card opens it (or closes it back to one line).
  const card = event.target instanceof HTMLElement && event.target.matches("#panel .thread.is-closed") ? event.target : null;
  if (event.key === "Enter" && card) {
    event.preventDefault();
    return setExpanded(card, !card.classList.contains("is-expanded"));
  }
  const active = view.activeId ? document.getElementById(`thread-${view.activeId}`) : null;
  switch (event.key) {
    case "j":
      moveActive(1);
      break;
    case "k":
      moveActive(-1);
      break;
    case "c":
      commentOnSelection();
      break;
    case "d":
      openComposer({ kind: "document" });
      break;
    case "r":
    case "e":
      // A finalized review takes no reply or status change until it is reopened.
      if (active && isFinalized()) {
        showToast("This review is finalized. Reopen it to write.");
      } else if (event.key === "r") {
        if (active) openForm(active, ".reply-form");
      } else {
        active?.querySelector('[data-action="resolve"]')?.dispatchEvent(new MouseEvent("click", { bubbles: true }));
      }
      break;
    case "?":
      showShortcuts();
      break;
    default:
      return;
  }
  event.preventDefault();
}

export function wireKeys() {
  document.addEventListener("keydown", onKeyDown);
  document.getElementById("shortcuts-button")?.addEventListener("click", showShortcuts);
}
