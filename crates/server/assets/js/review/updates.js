// @ts-check
/**
 * After every update of the panel (a write's answer, a live change, a filter): the highlights and
 * layout, the undo countdowns, the runs and arrivals, and a refused edit's text put back in its
 * form. A write's answer clears the draft it came from.
 */

import { clearDraft } from "../drafts.js";
import { afterApply, apply, isUpdate } from "./panel.js";
import { composerSlot, panel, view } from "./page.js";
import { activate, drawThreads, forgetStubs, scheduleLayout, watchStubs } from "./threads.js";
import { closeComposer, composerDraftKey } from "./composer.js";
import { announceRuns, noticeArrivals, syncUnlessWriting, watchArrivals } from "./live.js";

/**
 * A write's answer (a form in the panel, the composer): the thread written and the counts, put
 * in place; a successful write first clears the draft it came from (the new card would restore
 * it). Refusals shown as notices (retargeted to the toasts) are htmx's.
 */
function onWriteAnswered(event) {
  const detail = /** @type {CustomEvent} */ (event).detail;
  const form = detail.requestConfig?.elt;
  const xhr = /** @type {XMLHttpRequest | undefined} */ (detail.xhr);
  if (!(form instanceof HTMLFormElement) || !xhr || !form.closest("#panel, #composer-slot")) return;
  // Changes announced while the write was on its way that its answer does not cover.
  window.setTimeout(syncUnlessWriting, 0);
  if (xhr.getResponseHeader("HX-Retarget")) return;
  const status = xhr.status;
  if (status >= 200 && status <= 299) {
    for (const field of form.querySelectorAll("[data-draft-key]")) {
      clearDraft(/** @type {HTMLElement} */ (field).dataset.draftKey ?? "");
    }
    if (form.classList.contains("composer")) {
      clearDraft(composerDraftKey);
      closeComposer(false);
    }
  }
  if ((status >= 200 && status <= 299) || status === 409) {
    const text = xhr.responseText;
    if (isUpdate(text)) apply(text);
  }
}

// The undo window: "Sent · Undo (9 min)" counts down, and goes when the window closes.

/** The browser's clock minus the server's, taken when the panel was made. */
let clockSkew = 0;

function measureClockSkew() {
  const now = Number(panel()?.dataset.now);
  if (now) clockSkew = Date.now() - now;
}

function tickUndo() {
  const serverNow = Date.now() - clockSkew;
  for (const note of document.querySelectorAll("#panel [data-undo-until]")) {
    const element = /** @type {HTMLElement} */ (note);
    const left = Number(element.dataset.undoUntil) - serverNow;
    if (left <= 0) {
      element.remove();
      continue;
    }
    const button = element.querySelector("button");
    if (button) button.textContent = `Undo (${Math.ceil(left / 60000)} min)`;
  }
}

/** Cards change height (times localized, forms opened, fonts loaded): place them again. */
const cardSizes = new ResizeObserver(() => scheduleLayout());

/** @param {import("./panel.js").Applied} applied */
function afterPanelChange(applied) {
  const current = panel();
  if (!current) return;
  if (applied.whole) {
    cardSizes.disconnect();
    for (const card of current.querySelectorAll(".thread")) cardSizes.observe(card);
    forgetStubs();
    if (view.map) watchStubs(current);
  } else {
    for (const id of applied.changed) {
      const card = document.getElementById(`thread-${id}`);
      if (card) cardSizes.observe(card);
    }
  }
  measureClockSkew();
  tickUndo();
  const composerBase = composerSlot.querySelector('input[name="base"]');
  if (composerBase instanceof HTMLInputElement) composerBase.value = current.dataset.revision ?? "";
  drawThreads();
  // A new panel marks the current thread again; a partial update kept its mark (and the reader
  // stays where they are).
  const activeId = view.activeId;
  if (applied.whole && activeId && document.getElementById(`thread-${activeId}`)) activate(activeId, { scrollDocument: false, focusCard: false });
  announceRuns();
  if (applied.live) noticeArrivals(applied.added);
  watchArrivals();
  const offer = current.querySelector(".thread [data-reopen]");
  if (offer instanceof HTMLElement) {
    // The refused edit's form: a reply's, or else the comment's.
    const form = offer.closest(".reply, .thread")?.querySelector(".edit-form");
    const field = form?.querySelector("textarea");
    if (form instanceof HTMLFormElement && field) {
      form.hidden = false;
      field.value = offer.dataset.text ?? field.value;
    }
    offer.removeAttribute("data-reopen");
  }
}

export function wireUpdates() {
  document.body.addEventListener("htmx:afterRequest", onWriteAnswered);
  measureClockSkew();
  window.setInterval(tickUndo, 15000);
  // Every update (a write, a live change, a filter) gets its highlights and layout.
  afterApply(afterPanelChange);
  for (const card of panel()?.querySelectorAll(".thread") ?? []) cardSizes.observe(card);
}
