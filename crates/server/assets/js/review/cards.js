// @ts-check
/**
 * The cards of the panel: clicks on them (reply, edit, expand, jump to the passage), their
 * forms, the filters, and sending any form of the screen with Ctrl+Enter.
 */

import { clearDraft } from "../drafts.js";
import { refresh } from "./panel.js";
import { column } from "./page.js";
import { activate, scheduleLayout } from "./threads.js";
import { closeComposer } from "./composer.js";

/** Whether a resolved thread shows only its one line. */
export function isCollapsed(thread) {
  return thread.classList.contains("is-closed") && !thread.classList.contains("is-expanded");
}

/** Opens a resolved thread (or closes it back to its one line). */
export function setExpanded(thread, expanded) {
  thread.classList.toggle("is-expanded", expanded);
  thread.querySelector('[data-action="expand"]')?.setAttribute("aria-expanded", String(expanded));
  const button = thread.querySelector('[data-action="expand"]');
  if (button) button.textContent = expanded ? "Hide" : "Show";
  scheduleLayout();
}

/** Opens the form `selector` of a thread (within `scope`, a reply for a reply's edit). */
export function openForm(thread, selector, scope = thread) {
  if (isCollapsed(thread)) setExpanded(thread, true);
  const form = scope.querySelector(selector);
  if (!(form instanceof HTMLFormElement)) return;
  form.hidden = false;
  activate(thread.dataset.comment ?? "", { focusCard: false });
  form.querySelector("textarea")?.focus();
  scheduleLayout();
}

function closeForm(form) {
  const field = form.querySelector("textarea");
  if (field?.dataset.draftKey) clearDraft(field.dataset.draftKey);
  form.hidden = true;
  form.reset();
  scheduleLayout();
}

function onClick(event) {
  const target = /** @type {Element} */ (event.target);
  const action = target.closest("[data-action]");
  const thread = /** @type {HTMLElement | null} */ (target.closest(".thread"));
  if (action instanceof HTMLElement) {
    const kind = action.dataset.action;
    if (kind === "reply" && thread) return openForm(thread, ".reply-form");
    if (kind === "edit" && thread) return openForm(thread, ".edit-form");
    // A reply's Edit opens the form inside that reply.
    if (kind === "edit-reply" && thread) return openForm(thread, ".edit-form", action.closest(".reply") ?? thread);
    if (kind === "close-form") {
      const form = action.closest("form");
      if (form) closeForm(form);
      return;
    }
    if (kind === "close-composer") return closeComposer(true);
    if (kind === "expand" && thread) return setExpanded(thread, !thread.classList.contains("is-expanded"));
  }
  // "Clear filters" shows every thread without reloading the document.
  const clear = target.closest("[data-clear-filters]");
  if (clear instanceof HTMLAnchorElement) {
    event.preventDefault();
    history.replaceState(null, "", clear.href);
    refresh();
    return;
  }
  // A resolved thread shows one line until it is opened.
  if (thread && isCollapsed(thread) && !target.closest("a, form, input, textarea, select")) {
    setExpanded(thread, true);
    return activate(thread.dataset.comment ?? "", { focusCard: false });
  }
  const jump = target.closest("[data-jump]");
  if (jump instanceof HTMLElement) return activate(jump.dataset.jump ?? "");
  if (thread && !target.closest("button, a, form, summary, details, input, textarea, select")) {
    activate(thread.dataset.comment ?? "", { focusCard: false });
  }
}

/** A filter changed: the address keeps it, and the panel is asked for again. */
function onFilterChange(event) {
  const select = event.target;
  if (!(select instanceof HTMLSelectElement) || !select.closest("#filters")) return;
  const form = /** @type {HTMLFormElement} */ (select.form);
  const url = new URL(location.href);
  for (const [name, value] of new FormData(form)) {
    if (value) url.searchParams.set(name, String(value));
    else url.searchParams.delete(name);
  }
  history.replaceState(null, "", url);
  refresh();
}

export function wireCards() {
  column.addEventListener("click", onClick);
  column.addEventListener("change", onFilterChange);
  // A restored draft reopens its form, so the text is seen.
  column.addEventListener("draft-restored", (event) => {
    const form = /** @type {Element} */ (event.target).closest("form[data-draft-form]");
    if (form instanceof HTMLFormElement) form.hidden = false;
  });
  // Sending with Ctrl+Enter from any form of the screen.
  document.addEventListener("keydown", (event) => {
    if (event.key !== "Enter" || !(event.ctrlKey || event.metaKey)) return;
    const form = /** @type {Element} */ (event.target).closest?.("form");
    if (form instanceof HTMLFormElement) {
      event.preventDefault();
      form.requestSubmit();
    }
  });
  // Drafts restored before this module listened (app.js runs first) open their forms too.
  for (const field of column.querySelectorAll("form[data-draft-form] textarea")) {
    const textarea = /** @type {HTMLTextAreaElement} */ (field);
    if (textarea.value !== textarea.defaultValue) {
      /** @type {HTMLFormElement} */ (textarea.form).hidden = false;
    }
  }
}
