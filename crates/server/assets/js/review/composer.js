// @ts-check
/**
 * The composer: a new comment on a passage (the selection), a section or the whole document,
 * its draft kept while it is written, and the comment offered again on the latest version when
 * the document moved on meanwhile.
 */

import { describe, matchQuote } from "./anchoring.js";
import { clearDraft, loadDraft, saveDraft } from "../drafts.js";
import { showToast } from "../app.js";
import { composerSlot, frame, frameDocument, isFinalized, isLatest, narrow, openDrawer, panel, reviewId, root, selectionButton, view } from "./page.js";
import { scrollToFrameRect } from "./threads.js";
import { switchToVersion, whenFrameReady } from "./frame.js";

/** The key the composer's draft is kept under. */
export const composerDraftKey = `new:${reviewId}`;

/**
 * @typedef {{ kind: "quote", exact: string, prefix: string, suffix: string, start: number, end: number }
 *   | { kind: "section", section: string, label: string }
 *   | { kind: "document" }} Target
 */

/** @type {Target | null} */
let composerTarget = null;

/** @param {Target} target @param {string} [text] */
export function openComposer(target, text) {
  if (isFinalized()) {
    showToast("This review is finalized. Reopen it to comment.");
    return;
  }
  if (!isLatest()) {
    showToast("Comments are written on the latest version. Open the latest version to comment.");
    return;
  }
  let form = composerSlot.querySelector("form");
  const typed = form?.querySelector("textarea")?.value ?? "";
  if (!form) {
    const template = /** @type {HTMLTemplateElement} */ (document.getElementById("composer-template"));
    composerSlot.append(template.content.cloneNode(true));
    form = /** @type {HTMLFormElement} */ (composerSlot.querySelector("form"));
    // @ts-ignore htmx global
    window.htmx.process(form);
    form.querySelector("textarea")?.addEventListener("input", (event) => {
      const field = /** @type {HTMLTextAreaElement} */ (event.target);
      saveDraft(composerDraftKey, field.value, { target: composerTarget });
    });
  }
  setComposerTarget(form, target);
  const field = /** @type {HTMLTextAreaElement} */ (form.querySelector("textarea"));
  field.value = text ?? typed;
  if (field.value) saveDraft(composerDraftKey, field.value, { target });
  if (narrow.matches) openDrawer(false);
  composerSlot.classList.add("is-open");
  field.focus();
  selectionButton.hidden = true;
  positionComposer();
}

/** @param {HTMLFormElement} form @param {Target} target */
function setComposerTarget(form, target) {
  const map = view.map;
  composerTarget = target;
  const set = (name, value) => {
    const input = form.querySelector(`input[name="${name}"]`);
    if (input instanceof HTMLInputElement) input.value = String(value ?? "");
  };
  set("base", panel()?.dataset.revision);
  set("version", root.dataset.latest);
  set("section", target.kind === "section" ? target.section : "");
  set("exact", target.kind === "quote" ? target.exact : "");
  set("prefix", target.kind === "quote" ? target.prefix : "");
  set("suffix", target.kind === "quote" ? target.suffix : "");
  set("start", target.kind === "quote" ? target.start : "");
  set("end", target.kind === "quote" ? target.end : "");
  const label = /** @type {HTMLElement} */ (form.querySelector(".composer-target"));
  if (target.kind === "quote") {
    label.textContent = `On “${target.exact.length > 140 ? `${target.exact.slice(0, 140)}…` : target.exact}”`;
    const start = map?.toUtf16(target.start) ?? 0;
    const end = map?.toUtf16(target.end) ?? 0;
    view.highlighter?.setPending(map?.rangeOf(start, end) ?? null);
  } else {
    label.textContent = target.kind === "section" ? `On the section “${target.label}”` : "On the whole document";
    view.highlighter?.setPending(null);
  }
}

/** Puts the composer beside its passage (on a wide screen). */
export function positionComposer() {
  const map = view.map;
  if (narrow.matches || composerTarget?.kind !== "quote" || !map) {
    composerSlot.style.transform = "";
    return;
  }
  const range = map.rangeOf(map.toUtf16(composerTarget.start), map.toUtf16(composerTarget.end));
  const rect = range?.getClientRects()[0];
  if (!rect) return;
  const top = frame.getBoundingClientRect().top + rect.top;
  const slotTop = composerSlot.getBoundingClientRect().top - (parseFloat(composerSlot.style.transform.replace(/[^\d.-]/g, "")) || 0);
  composerSlot.style.transform = `translateY(${Math.max(0, Math.round(top - slotTop))}px)`;
}

/** Closes the composer; `discard` also forgets its draft. */
export function closeComposer(discard) {
  if (discard) clearDraft(composerDraftKey);
  composerSlot.replaceChildren();
  composerSlot.classList.remove("is-open");
  composerSlot.style.transform = "";
  composerTarget = null;
  view.highlighter?.setPending(null);
}

/** Opens the composer on the document's selection (or says to select first). */
export function commentOnSelection() {
  const doc = frameDocument();
  const selection = doc?.getSelection();
  if (!view.map || !selection || selection.isCollapsed || selection.rangeCount === 0) {
    showToast("Select some text in the document first.");
    return;
  }
  const described = describe(view.map, selection.getRangeAt(0));
  if (!described) return;
  openComposer({ kind: "quote", ...described });
}

/**
 * The document moved on while a comment was being written (409 `stale_target_version`): show the
 * latest version, find the passage there, and offer the comment again.
 */
function onStaleVersion(event) {
  const latest = /** @type {CustomEvent} */ (event).detail?.latest;
  if (!latest) return;
  const target = composerTarget;
  const text = composerSlot.querySelector("textarea")?.value ?? "";
  switchToVersion(latest, () => {
    const map = view.map;
    if (!target) return;
    let next = target;
    let notice = "A new version of the document arrived while you wrote. Your comment was not sent yet: check it, then send it again.";
    if (target.kind === "quote" && map) {
      const found = matchQuote(map.text, target.exact, target.prefix, target.suffix, map.toUtf16(target.start));
      if (found) {
        next = { ...target, start: map.toCodePoints(found.start), end: map.toCodePoints(found.end) };
      } else {
        next = { kind: "document" };
        notice = `A new version arrived, and the passage “${target.exact}” is not in it. Your comment now goes on the whole document; select a passage to place it elsewhere.`;
      }
    }
    openComposer(next, text);
    const box = composerSlot.querySelector(".composer-notice");
    if (box instanceof HTMLElement) {
      box.hidden = false;
      box.textContent = notice;
    }
  });
}

/** The section outline: a section's Comment button, or its title (which shows the section). */
function onSectionButton(event) {
  const button = /** @type {Element} */ (event.target).closest?.("[data-section-comment], [data-section-jump]");
  if (!(button instanceof HTMLElement)) return;
  const map = view.map;
  if (button.dataset.sectionComment) {
    const label = document.querySelector(`[data-section-jump="${CSS.escape(button.dataset.sectionComment)}"]`)?.textContent ?? "";
    openComposer({ kind: "section", section: button.dataset.sectionComment, label });
  } else if (map) {
    const start = map.toUtf16(Number(button.dataset.start));
    const range = map.rangeOf(start, Math.min(start + 1, map.text.length));
    if (range) scrollToFrameRect(range.getBoundingClientRect());
  }
}

export function wireComposer() {
  selectionButton.addEventListener("mousedown", (event) => event.preventDefault());
  selectionButton.addEventListener("click", commentOnSelection);
  document.getElementById("comment-document")?.addEventListener("click", () => openComposer({ kind: "document" }));
  document.addEventListener("click", onSectionButton);
  document.body.addEventListener("stale-version", onStaleVersion);
}

/** An unsent comment from before (a reload, an ended session) comes back. */
export function restoreUnsentComment() {
  const saved = loadDraft(composerDraftKey);
  if (saved?.target && isLatest()) {
    whenFrameReady(() => {
      openComposer(saved.target, saved.text);
      showToast("Your unsent comment is back in the composer.");
    });
  }
}
