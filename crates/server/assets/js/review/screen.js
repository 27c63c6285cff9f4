// @ts-check
/**
 * The review screen: the document frame (highlights, links, selection), the comments beside it
 * (aligned with their passages, current comment in sync both ways), the composer, live updates
 * from the events stream, keyboard shortcuts, and the drawer on narrow screens.
 *
 * The server renders every comment (askama); after a write or a live change only the threads
 * that changed come back and are put in place (`panel.js`). This module only does what needs
 * the browser: reading the frame's DOM, drawing, and keeping what the person typed.
 */

import { TextMap } from "./text.js";
import { describe, locate, matchQuote } from "./anchoring.js";
import { Highlighter } from "./highlight.js";
import { placeCards, unplaceCards } from "./layout.js";
import { clearDraft, loadDraft, saveDraft } from "../drafts.js";
import { showToast } from "../app.js";
import { afterApply, apply, isUpdate, load, refresh, sync } from "./panel.js";

const root = /** @type {HTMLElement} */ (document.getElementById("review"));
const frame = /** @type {HTMLIFrameElement} */ (document.getElementById("doc-frame"));
const column = /** @type {HTMLElement} */ (document.getElementById("comments-column"));
const composerSlot = /** @type {HTMLElement} */ (document.getElementById("composer-slot"));
const selectionButton = /** @type {HTMLButtonElement} */ (document.getElementById("selection-button"));
const narrow = window.matchMedia("(max-width: 900px)");

const reviewId = root.dataset.review ?? "";
const composerDraftKey = `new:${reviewId}`;

/** @type {TextMap | null} */
let map = null;
/** @type {Highlighter | null} */
let highlighter = null;
/** Passages of the threads drawn, by comment id (UTF-16 offsets in `map.text`). */
let passages = new Map();
/** @type {string | null} */
let activeId = null;
let frameResets = 0;

function panel() {
  return /** @type {HTMLElement | null} */ (document.getElementById("panel"));
}

function viewPath() {
  return new URL(root.dataset.viewUrl ?? "", location.href).pathname;
}

function isLatest() {
  return root.dataset.version === root.dataset.latest;
}

// ---------------------------------------------------------------------------------------
// The frame: load, reset on navigation, size to its content, links, clicks, selection.

function frameDocument() {
  try {
    return frame.contentDocument;
  } catch {
    return null;
  }
}

function onFrameLoad() {
  const doc = frameDocument();
  // A document that navigated its frame (a refresh, a link) is put back.
  if (!doc || doc.location.pathname !== viewPath()) {
    if (frameResets++ < 3) frame.src = root.dataset.viewUrl ?? "about:blank";
    return;
  }
  const frameWindow = /** @type {Window & typeof globalThis} */ (frame.contentWindow);
  map = new TextMap(doc);
  highlighter = new Highlighter(frameWindow);
  sizeFrame();
  new ResizeObserver(() => {
    sizeFrame();
    scheduleLayout();
  }).observe(doc.documentElement);
  doc.addEventListener("click", onFrameClick, true);
  doc.addEventListener("auxclick", onFrameClick, true);
  doc.addEventListener("submit", (event) => event.preventDefault(), true);
  doc.addEventListener("mouseup", () => setTimeout(updateSelectionButton, 0));
  doc.addEventListener("keyup", updateSelectionButton);
  doc.addEventListener("selectionchange", updateSelectionButton);
  doc.addEventListener("keydown", onKeyDown);
  drawThreads();
  root.classList.add("frame-ready");
  const shown = panel();
  if (shown) requestAnimationFrame(() => watchStubs(shown));
  // When the screen became usable: the document shown, every highlight drawn, handlers in place.
  if (!performance.getEntriesByName("review-ready").length) performance.mark("review-ready");
  afterFrameReady.splice(0).forEach((callback) => callback());
}

/** @type {Array<() => void>} */
const afterFrameReady = [];

function sizeFrame() {
  const doc = frameDocument();
  if (!doc?.documentElement) return;
  // The content's own height (scrollHeight would never shrink below the frame's).
  const height = Math.max(Math.ceil(doc.documentElement.getBoundingClientRect().height), doc.body?.scrollHeight ?? 0, 200);
  frame.style.height = `${height}px`;
}

/** Links open through the app, in a new tab, never inside the frame. */
function onFrameClick(event) {
  // The frame's own `Element` (another realm's nodes fail the page's `instanceof Element`).
  const frameWindow = /** @type {(Window & typeof globalThis) | null} */ (frame.contentWindow);
  const target = frameWindow && event.target instanceof frameWindow.Element ? event.target : null;
  const link = target?.closest("a[href]");
  if (link) {
    event.preventDefault();
    event.stopPropagation();
    const href = link.getAttribute("href") ?? "";
    if (href.startsWith("#")) {
      const id = decodeURIComponent(href.slice(1));
      const element = frameDocument()?.getElementById(id);
      if (element) scrollToFrameRect(element.getBoundingClientRect());
      return;
    }
    const url = new URL(href, frame.contentWindow?.location.href);
    if (url.protocol === "http:" || url.protocol === "https:") {
      window.open(url.href, "_blank", "noopener,noreferrer");
    }
    return;
  }
  if (event.type !== "click") return;
  const selection = frameDocument()?.getSelection();
  if (selection && !selection.isCollapsed) return;
  const id = threadAt(event.clientX, event.clientY);
  if (id) activate(id, { scrollDocument: false, focusCard: false });
}

/** The comment whose passage is under a point of the frame (the shortest, if several). */
function threadAt(x, y) {
  const doc = frameDocument();
  if (!doc || !map) return null;
  let node = null;
  let offset = 0;
  if (doc.caretPositionFromPoint) {
    const position = doc.caretPositionFromPoint(x, y);
    if (position) ({ offsetNode: node, offset } = position);
  } else if (doc.caretRangeFromPoint) {
    const range = doc.caretRangeFromPoint(x, y);
    if (range) ({ startContainer: node, startOffset: offset } = range);
  }
  if (!node) return null;
  const at = map.offsetOf(node, offset);
  let best = null;
  let bestLength = Infinity;
  for (const [id, passage] of passages) {
    if (passage.start <= at && at < passage.end && passage.end - passage.start < bestLength) {
      best = id;
      bestLength = passage.end - passage.start;
    }
  }
  return best;
}

function updateSelectionButton() {
  const doc = frameDocument();
  const selection = doc?.getSelection();
  const composing = composerSlot.querySelector("form") !== null;
  if (!doc || !map || composing || !isLatest() || !selection || selection.isCollapsed || selection.rangeCount === 0) {
    selectionButton.hidden = true;
    return;
  }
  const rect = selection.getRangeAt(0).getBoundingClientRect();
  const frameRect = frame.getBoundingClientRect();
  selectionButton.hidden = false;
  const left = Math.min(frameRect.left + rect.right + window.scrollX + 6, window.scrollX + window.innerWidth - 110);
  selectionButton.style.left = `${Math.max(4, left)}px`;
  selectionButton.style.top = `${frameRect.top + rect.top + window.scrollY - 4}px`;
}

// ---------------------------------------------------------------------------------------
// Threads: highlights, alignment, the current thread.

function threadElements() {
  return /** @type {HTMLElement[]} */ (Array.from(panel()?.querySelectorAll(".thread") ?? []));
}

function sectionStart(sectionId) {
  const button = document.querySelector(`[data-section-jump="${CSS.escape(sectionId)}"]`);
  return button instanceof HTMLElement ? Number(button.dataset.start) : null;
}

/**
 * Where each thread's passage was found, by comment id, with what it was found from: a thread
 * that did not move is not looked for again when others change.
 * @type {Map<string, { key: string, map: TextMap, found: { start: number, end: number } | null, range: Range | null }>}
 */
let located = new Map();

function drawThreads() {
  if (!map) return;
  passages = new Map();
  const items = [];
  const next = new Map();
  for (const element of threadElements()) {
    const id = element.dataset.comment ?? "";
    if (element.dataset.state === "orphaned" || element.dataset.start === "") continue;
    const key = `${element.dataset.start}|${element.dataset.end}|${element.dataset.state}|${element.dataset.exact}`;
    let entry = located.get(id);
    if (!entry || entry.key !== key || entry.map !== map) {
      const found = locate(map, {
        start: Number(element.dataset.start),
        end: Number(element.dataset.end),
        exact: element.dataset.exact,
        fuzzy: element.dataset.state === "fuzzy",
      });
      entry = { key, map, found, range: found ? map.rangeOf(found.start, found.end) : null };
    }
    next.set(id, entry);
    const { found, range } = entry;
    if (!found || !range) {
      element.classList.add("not-found");
      continue;
    }
    passages.set(id, found);
    items.push({
      id,
      category: element.dataset.category ?? "none",
      closed: element.classList.contains("is-closed"),
      range,
    });
  }
  located = next;
  highlighter?.draw(items);
  root.dataset.highlights = String(items.length);
  scheduleLayout();
}

let layoutPending = false;
function scheduleLayout() {
  if (layoutPending) return;
  layoutPending = true;
  requestAnimationFrame(() => {
    layoutPending = false;
    layout();
  });
}

/** The frame-relative top of a thread's passage (or its section), in page pixels. */
function passageTop(element) {
  const id = element.dataset.comment ?? "";
  const passage = passages.get(id);
  let rect = null;
  if (passage && map) rect = map.rangeOf(passage.start, passage.end)?.getClientRects()[0] ?? null;
  if (!rect && element.dataset.section && map) {
    const start = sectionStart(element.dataset.section);
    if (start !== null) {
      const offset = map.toUtf16(start);
      rect = map.rangeOf(offset, Math.min(offset + 1, map.text.length))?.getClientRects()[0] ?? null;
    }
  }
  if (!rect) return null;
  const frameWindow = frame.contentWindow;
  return frame.getBoundingClientRect().top + window.scrollY + rect.top + (frameWindow?.scrollY ?? 0);
}

function layout() {
  const group = /** @type {HTMLElement | null} */ (panel()?.querySelector(".group-anchored") ?? null);
  if (!group) return;
  const cards = /** @type {HTMLElement[]} */ (Array.from(group.querySelectorAll(".thread")));
  if (narrow.matches) {
    group.classList.remove("placed");
    unplaceCards(group, cards.map((element) => ({ element, top: 0 })));
    return;
  }
  group.classList.add("placed");
  const groupTop = group.getBoundingClientRect().top + window.scrollY;
  const placed = [];
  for (const element of cards) {
    const top = passageTop(element);
    placed.push({ element, top: top === null ? (placed.at(-1)?.top ?? 0) : top - groupTop });
  }
  const active = placed.findIndex((card) => card.element.dataset.comment === activeId);
  placeCards(group, placed, active);
}

/**
 * Makes a thread the current one: its card marked (and focused), its passage highlighted, and
 * either scrolled into view.
 */
function activate(id, { scrollDocument = true, focusCard = true } = {}) {
  activeId = id;
  if (document.getElementById(`thread-${id}`)?.classList.contains("stub")) want(id, true);
  for (const element of threadElements()) {
    element.classList.toggle("is-active", element.dataset.comment === id);
  }
  highlighter?.setActive(id);
  const card = document.getElementById(`thread-${id}`);
  if (narrow.matches && card && !scrollDocument) openDrawer(false);
  layout();
  if (scrollDocument) {
    const passage = passages.get(id);
    const range = passage && map?.rangeOf(passage.start, passage.end);
    if (range) scrollToFrameRect(range.getBoundingClientRect());
  }
  if (card) {
    if (focusCard) card.focus({ preventScroll: true });
    if (narrow.matches || !scrollDocument) card.scrollIntoView({ block: "nearest" });
  }
}

/** Scrolls the page so a rectangle of the frame (its own coordinates) is in view. */
function scrollToFrameRect(rect) {
  const top = frame.getBoundingClientRect().top + window.scrollY + rect.top;
  window.scrollTo({ top: Math.max(0, top - window.innerHeight / 3), behavior: "instant" });
}

function moveActive(step) {
  const threads = threadElements().filter((element) => !element.closest("[hidden]"));
  if (threads.length === 0) return;
  const at = threads.findIndex((element) => element.dataset.comment === activeId);
  const next = at === -1 ? (step > 0 ? 0 : threads.length - 1) : (at + step + threads.length) % threads.length;
  activate(threads[next].dataset.comment ?? "");
}

// ---------------------------------------------------------------------------------------
// Threads the page holds in short (past the first cards) are loaded as the reader comes close
// to them, and at once when one is made current.

/** Ids to load, and ids on their way. */
const wanted = new Set();
const requested = new Set();
let wantTimer = 0;

/** Asks for the card of `id` (soon, with others; or now). */
function want(id, now = false) {
  if (!id || requested.has(id)) return;
  wanted.add(id);
  if (now) {
    window.clearTimeout(wantTimer);
    wantTimer = 0;
    loadWanted();
  } else if (!wantTimer) {
    wantTimer = window.setTimeout(loadWanted, 30);
  }
}

async function loadWanted() {
  wantTimer = 0;
  const ids = [...wanted].slice(0, 100);
  for (const id of ids) {
    wanted.delete(id);
    requested.add(id);
  }
  if (wanted.size > 0) wantTimer = window.setTimeout(loadWanted, 0);
  try {
    await load(ids);
  } finally {
    for (const id of ids) requested.delete(id);
  }
}

const nearStubs = new IntersectionObserver(
  (entries) => {
    for (const entry of entries) {
      if (entry.isIntersecting) want(/** @type {HTMLElement} */ (entry.target).dataset.comment ?? "");
    }
  },
  { rootMargin: "1200px 0px" },
);

/** Watches every short thread under `element` (once the document is shown and laid out). */
function watchStubs(element) {
  for (const stub of element.querySelectorAll(".thread.stub")) nearStubs.observe(stub);
}

// ---------------------------------------------------------------------------------------
// The panel: clicks on cards, reply and edit forms, filters, after every swap.

column.addEventListener("click", (event) => {
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
});

/** Whether a resolved thread shows only its one line. */
function isCollapsed(thread) {
  return thread.classList.contains("is-closed") && !thread.classList.contains("is-expanded");
}

/** Opens a resolved thread (or closes it back to its one line). */
function setExpanded(thread, expanded) {
  thread.classList.toggle("is-expanded", expanded);
  thread.querySelector('[data-action="expand"]')?.setAttribute("aria-expanded", String(expanded));
  const button = thread.querySelector('[data-action="expand"]');
  if (button) button.textContent = expanded ? "Hide" : "Show";
  scheduleLayout();
}

function openForm(thread, selector, scope = thread) {
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

// A restored draft reopens its form, so the text is seen.
column.addEventListener("draft-restored", (event) => {
  const form = /** @type {Element} */ (event.target).closest("form[data-draft-form]");
  if (form instanceof HTMLFormElement) form.hidden = false;
});

column.addEventListener("change", (event) => {
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

/** The newest comments revision the events stream announced. */
let latestRevision = 0;

/** Whether a write of the screen is on its way (htmx marks its form meanwhile). */
function writing() {
  return document.querySelector("#panel form.htmx-request, #composer-slot form.htmx-request") !== null;
}

/** Asks for the threads changed since the page got them, unless a write's answer will come first. */
function syncUnlessWriting() {
  if (!writing() && Number(panel()?.dataset.revision) < latestRevision) sync();
}

// A write's answer (a form in the panel, the composer): the thread written and the counts, put
// in place; a successful write first clears the draft it came from (the new card would restore
// it). Refusals shown as notices (retargeted to the toasts) are htmx's.
document.body.addEventListener("htmx:afterRequest", (event) => {
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
});

let runsBefore = runStates();

// ---------------------------------------------------------------------------------------
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
measureClockSkew();
window.setInterval(tickUndo, 15000);

// Every update (a write, a live change, a filter) gets its highlights and layout.
afterApply(afterPanelChange);

/** Cards change height (times localized, forms opened, fonts loaded): place them again. */
const cardSizes = new ResizeObserver(() => scheduleLayout());

/** @param {import("./panel.js").Applied} applied */
function afterPanelChange(applied) {
  const current = panel();
  if (!current) return;
  if (applied.whole) {
    cardSizes.disconnect();
    for (const card of current.querySelectorAll(".thread")) cardSizes.observe(card);
    nearStubs.disconnect();
    if (map) watchStubs(current);
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

/** @returns {Map<string, {status: string, title: string, summary: string}>} */
function runStates() {
  const states = new Map();
  for (const item of document.querySelectorAll("#panel .runs-data li")) {
    const element = /** @type {HTMLElement} */ (item);
    states.set(element.dataset.run ?? "", {
      status: element.dataset.status ?? "",
      title: element.dataset.title ?? "",
      summary: element.textContent ?? "",
    });
  }
  return states;
}

/** Says so when a run completes, fails or is cancelled while the screen is open. */
function announceRuns() {
  const now = runStates();
  for (const [id, run] of now) {
    const before = runsBefore.get(id);
    if (before?.status === "running" && run.status !== "running") {
      const what = { completed: "completed", failed: "failed", cancelled: "was cancelled" }[run.status] ?? run.status;
      const drafts = run.status === "completed" ? "its comments are final now" : "its draft comments were removed";
      showToast(`The run “${run.title}” ${what}: ${drafts}.${run.summary ? ` ${run.summary}` : ""}`);
    } else if (!before && run.status === "running") {
      showToast(`The run “${run.title}” started; its comments show as drafts until it completes.`);
    }
  }
  runsBefore = now;
}


// ---------------------------------------------------------------------------------------
// A discreet cue for comments from elsewhere that arrive out of view: "2 new comments", which
// goes to the first of them; one seen on screen stops counting.

const arrivalsCue = /** @type {HTMLButtonElement} */ (document.getElementById("new-comments"));
/** Threads that arrived out of view and were not seen yet, in arrival order. */
let arrivals = /** @type {string[]} */ ([]);

const arrivalsSeen = new IntersectionObserver((entries) => {
  for (const entry of entries) {
    if (entry.isIntersecting) forgetArrival(/** @type {HTMLElement} */ (entry.target).dataset.comment ?? "");
  }
});

/** Whether a card is on screen (on a phone, in the open drawer). */
function inView(card) {
  if (narrow.matches && !root.classList.contains("drawer-open")) return false;
  const rect = card.getBoundingClientRect();
  return rect.bottom > 0 && rect.top < window.innerHeight && rect.height > 0;
}

/** @param {string[]} ids threads new to the page, from a change made elsewhere */
function noticeArrivals(ids) {
  // Cards go beside their passages when the layout runs: place them before looking.
  if (ids.length > 0) layout();
  for (const id of ids) {
    const card = document.getElementById(`thread-${id}`);
    if (card && !inView(card) && !arrivals.includes(id)) arrivals.push(id);
  }
  showArrivals();
}

/** Watches the cards of the arrivals (a card replaced by an update is a new element). */
function watchArrivals() {
  arrivalsSeen.disconnect();
  arrivals = arrivals.filter((id) => document.getElementById(`thread-${id}`));
  for (const id of arrivals) arrivalsSeen.observe(/** @type {HTMLElement} */ (document.getElementById(`thread-${id}`)));
  showArrivals();
}

function forgetArrival(id) {
  arrivals = arrivals.filter((other) => other !== id);
  showArrivals();
}

function showArrivals() {
  arrivalsCue.hidden = arrivals.length === 0;
  arrivalsCue.textContent = arrivals.length === 1 ? "1 new comment" : `${arrivals.length} new comments`;
}

arrivalsCue.addEventListener("click", () => {
  const [first] = arrivals;
  if (!first) return;
  forgetArrival(first);
  if (narrow.matches) openDrawer(false);
  activate(first);
});

// ---------------------------------------------------------------------------------------
// The composer: a new comment on a passage, a section or the whole document.

/**
 * @typedef {{ kind: "quote", exact: string, prefix: string, suffix: string, start: number, end: number }
 *   | { kind: "section", section: string, label: string }
 *   | { kind: "document" }} Target
 */

/** @param {Target} target @param {string} [text] */
function openComposer(target, text) {
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

/** @type {Target | null} */
let composerTarget = null;

/** @param {HTMLFormElement} form @param {Target} target */
function setComposerTarget(form, target) {
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
    highlighter?.setPending(map?.rangeOf(start, end) ?? null);
  } else {
    label.textContent = target.kind === "section" ? `On the section “${target.label}”` : "On the whole document";
    highlighter?.setPending(null);
  }
}

function positionComposer() {
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

function closeComposer(discard) {
  if (discard) clearDraft(composerDraftKey);
  composerSlot.replaceChildren();
  composerSlot.classList.remove("is-open");
  composerSlot.style.transform = "";
  composerTarget = null;
  highlighter?.setPending(null);
}

function commentOnSelection() {
  const doc = frameDocument();
  const selection = doc?.getSelection();
  if (!map || !selection || selection.isCollapsed || selection.rangeCount === 0) {
    showToast("Select some text in the document first.");
    return;
  }
  const described = describe(map, selection.getRangeAt(0));
  if (!described) return;
  openComposer({ kind: "quote", ...described });
}

selectionButton.addEventListener("mousedown", (event) => event.preventDefault());
selectionButton.addEventListener("click", commentOnSelection);
document.getElementById("comment-document")?.addEventListener("click", () => openComposer({ kind: "document" }));
document.addEventListener("click", (event) => {
  const button = /** @type {Element} */ (event.target).closest?.("[data-section-comment], [data-section-jump]");
  if (!(button instanceof HTMLElement)) return;
  if (button.dataset.sectionComment) {
    const label = document.querySelector(`[data-section-jump="${CSS.escape(button.dataset.sectionComment)}"]`)?.textContent ?? "";
    openComposer({ kind: "section", section: button.dataset.sectionComment, label });
  } else if (map) {
    const start = map.toUtf16(Number(button.dataset.start));
    const range = map.rangeOf(start, Math.min(start + 1, map.text.length));
    if (range) scrollToFrameRect(range.getBoundingClientRect());
  }
});

// The document moved on while a comment was being written (409 stale_target_version): show
// the latest version, find the passage there, and offer the comment again.
document.body.addEventListener("stale-version", (event) => {
  const latest = /** @type {CustomEvent} */ (event).detail?.latest;
  if (!latest) return;
  const target = composerTarget;
  const text = composerSlot.querySelector("textarea")?.value ?? "";
  switchToVersion(latest, () => {
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
});

/** Shows version `versionId` (the latest) in the frame, then runs `then`. */
function switchToVersion(versionId, then) {
  root.dataset.version = versionId;
  root.dataset.latest = versionId;
  root.dataset.viewUrl = `/reviews/${reviewId}/versions/${versionId}/view`;
  const url = new URL(location.href);
  url.searchParams.delete("version");
  history.replaceState(null, "", url);
  document.getElementById("new-version-banner")?.setAttribute("hidden", "");
  afterFrameReady.push(then);
  map = null;
  frameResets = 0;
  frame.src = root.dataset.viewUrl;
}

// ---------------------------------------------------------------------------------------
// Live: the events stream refreshes the panel; a new version is announced, not forced.

/** @type {EventSource | null} */
let events = null;

function followEvents() {
  const source = new EventSource(`/api/reviews/${encodeURIComponent(reviewId)}/events`);
  events = source;
  let timer = 0;
  source.addEventListener("comments", (event) => {
    const data = JSON.parse(/** @type {MessageEvent} */ (event).data);
    latestRevision = Math.max(latestRevision, Number(data.commentsRevision));
    // One's own write brings its thread itself: ask only for what its answer does not cover.
    clearTimeout(timer);
    timer = window.setTimeout(syncUnlessWriting, 20);
  });
  source.addEventListener("version", (event) => {
    const data = JSON.parse(/** @type {MessageEvent} */ (event).data);
    if (data.latestVersionId === root.dataset.latest) return;
    // Keep showing (and refreshing) the version on screen; offer the new one.
    if (isLatest()) {
      const url = new URL(location.href);
      url.searchParams.set("version", root.dataset.version ?? "");
      history.replaceState(null, "", url);
    }
    root.dataset.latest = data.latestVersionId;
    const banner = document.getElementById("new-version-banner");
    if (banner) banner.hidden = false;
    refresh();
  });
}

// ---------------------------------------------------------------------------------------
// Keyboard, the shortcuts list, the drawer.

function isTyping(target) {
  return target instanceof Element && !!target.closest("input, textarea, select, [contenteditable]");
}

/** @param {KeyboardEvent} event */
function onKeyDown(event) {
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
  const active = activeId ? document.getElementById(`thread-${activeId}`) : null;
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
      if (active) openForm(active, ".reply-form");
      break;
    case "e":
      active?.querySelector('[data-action="resolve"]')?.dispatchEvent(new MouseEvent("click", { bubbles: true }));
      break;
    case "?":
      /** @type {HTMLDialogElement} */ (document.getElementById("shortcuts")).showModal();
      break;
    default:
      return;
  }
  event.preventDefault();
}

document.addEventListener("keydown", onKeyDown);
document.getElementById("shortcuts-button")?.addEventListener("click", () => {
  /** @type {HTMLDialogElement} */ (document.getElementById("shortcuts")).showModal();
});

const drawerToggle = /** @type {HTMLButtonElement} */ (document.getElementById("drawer-toggle"));
function openDrawer(focus = true) {
  root.classList.add("drawer-open");
  drawerToggle.setAttribute("aria-expanded", "true");
  if (focus) column.querySelector("button, [tabindex]")?.dispatchEvent(new FocusEvent("focus"));
  if (focus) /** @type {HTMLElement | null} */ (column.querySelector("#drawer-close"))?.focus();
}
function closeDrawer() {
  root.classList.remove("drawer-open");
  drawerToggle.setAttribute("aria-expanded", "false");
  drawerToggle.focus();
}
drawerToggle.addEventListener("click", () => (root.classList.contains("drawer-open") ? closeDrawer() : openDrawer()));
document.getElementById("drawer-close")?.addEventListener("click", closeDrawer);
narrow.addEventListener("change", scheduleLayout);
window.addEventListener("resize", () => {
  scheduleLayout();
  positionComposer();
});

// ---------------------------------------------------------------------------------------
// Start.

frame.addEventListener("load", onFrameLoad);
/** Whether the frame shows its document, loaded, and the screen has not taken it up yet. */
function frameLoadedUnseen() {
  const doc = frameDocument();
  return !map && doc?.readyState === "complete" && doc.location.pathname === viewPath();
}
if (frameLoadedUnseen()) onFrameLoad();
// A load event that fired between the check above and the listener (or while this module was
// still loading) would leave the screen waiting forever: look again until the frame is taken up.
const frameWatch = window.setInterval(() => {
  if (map) window.clearInterval(frameWatch);
  else if (frameLoadedUnseen()) onFrameLoad();
}, 250);
followEvents();
// A page left behind (or kept in the back/forward cache) lets go of its stream: browsers allow
// six connections to a host over HTTP/1.1, and each open review holds one.
window.addEventListener("pagehide", () => {
  events?.close();
  events = null;
});
window.addEventListener("pageshow", (event) => {
  if (!event.persisted || events) return;
  followEvents();
  refresh();
});
// Drafts restored before this module listened (app.js runs first) open their forms too.
for (const field of column.querySelectorAll("form[data-draft-form] textarea")) {
  const textarea = /** @type {HTMLTextAreaElement} */ (field);
  if (textarea.value !== textarea.defaultValue) {
    /** @type {HTMLFormElement} */ (textarea.form).hidden = false;
  }
}
for (const card of panel()?.querySelectorAll(".thread") ?? []) cardSizes.observe(card);

// A link to one thread (`#thread-<id>`, as search results give) opens it at its passage.
const linked = location.hash.startsWith("#thread-") ? decodeURIComponent(location.hash.slice(8)) : "";
if (linked) {
  afterFrameReady.push(() => {
    if (document.getElementById(`thread-${linked}`)) activate(linked);
  });
  if (map) afterFrameReady.splice(0).forEach((callback) => callback());
}

// An unsent comment from before (a reload, an ended session) comes back.
const saved = loadDraft(composerDraftKey);
if (saved?.target && isLatest()) {
  afterFrameReady.push(() => {
    openComposer(saved.target, saved.text);
    showToast("Your unsent comment is back in the composer.");
  });
  if (map) afterFrameReady.splice(0).forEach((callback) => callback());
}
