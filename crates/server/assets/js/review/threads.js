// @ts-check
/**
 * The threads on the document: their highlights, their cards placed beside their passages, the
 * current thread (in sync both ways), and the threads the page holds only in short, loaded as the
 * reader comes close to them.
 */

import { locate } from "./anchoring.js";
import { placeCards, unplaceCards } from "./layout.js";
import { load } from "./panel.js";
import { frame, narrow, openDrawer, panel, root, view } from "./page.js";

/** @typedef {import("./text.js").TextMap} TextMap */

export function threadElements() {
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

/** Draws every thread's highlight (finding the passages that moved), then places the cards. */
export function drawThreads() {
  const map = view.map;
  if (!map) return;
  view.passages = new Map();
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
    view.passages.set(id, found);
    items.push({
      id,
      category: element.dataset.category ?? "none",
      closed: element.classList.contains("is-closed"),
      range,
    });
  }
  located = next;
  view.highlighter?.draw(items);
  root.dataset.highlights = String(items.length);
  scheduleLayout();
}

let layoutPending = false;

/** Places the cards at the next frame (once, however often asked meanwhile). */
export function scheduleLayout() {
  if (layoutPending) return;
  layoutPending = true;
  requestAnimationFrame(() => {
    layoutPending = false;
    layout();
  });
}

/** The frame-relative top of a thread's passage (or its section), in page pixels. */
function passageTop(element) {
  const map = view.map;
  const id = element.dataset.comment ?? "";
  const passage = view.passages.get(id);
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

/** Places the anchored cards beside their passages (in one column on a narrow screen). */
export function layout() {
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
  const active = placed.findIndex((card) => card.element.dataset.comment === view.activeId);
  placeCards(group, placed, active);
}

/**
 * Makes a thread the current one: its card marked (and focused), its passage highlighted, and
 * either scrolled into view.
 */
export function activate(id, { scrollDocument = true, focusCard = true } = {}) {
  view.activeId = id;
  if (document.getElementById(`thread-${id}`)?.classList.contains("stub")) want(id, true);
  for (const element of threadElements()) {
    element.classList.toggle("is-active", element.dataset.comment === id);
  }
  view.highlighter?.setActive(id);
  const card = document.getElementById(`thread-${id}`);
  if (narrow.matches && card && !scrollDocument) openDrawer(false);
  layout();
  if (scrollDocument) {
    const passage = view.passages.get(id);
    const range = passage && view.map?.rangeOf(passage.start, passage.end);
    if (range) scrollToFrameRect(range.getBoundingClientRect());
  }
  if (card) {
    if (focusCard) card.focus({ preventScroll: true });
    if (narrow.matches || !scrollDocument) card.scrollIntoView({ block: "nearest" });
  }
}

/** Scrolls the page so a rectangle of the frame (its own coordinates) is in view. */
export function scrollToFrameRect(rect) {
  const top = frame.getBoundingClientRect().top + window.scrollY + rect.top;
  window.scrollTo({ top: Math.max(0, top - window.innerHeight / 3), behavior: "instant" });
}

/** Makes the next (`step` 1) or previous (-1) shown thread the current one. */
export function moveActive(step) {
  const threads = threadElements().filter((element) => !element.closest("[hidden]"));
  if (threads.length === 0) return;
  const at = threads.findIndex((element) => element.dataset.comment === view.activeId);
  const next = at === -1 ? (step > 0 ? 0 : threads.length - 1) : (at + step + threads.length) % threads.length;
  activate(threads[next].dataset.comment ?? "");
}

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
export function watchStubs(element) {
  for (const stub of element.querySelectorAll(".thread.stub")) nearStubs.observe(stub);
}

/** Stops watching the short threads of a panel that was replaced. */
export function forgetStubs() {
  nearStubs.disconnect();
}
