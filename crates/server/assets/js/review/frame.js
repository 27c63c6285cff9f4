// @ts-check
/**
 * The document frame: loading (and putting back a document that navigated away), sizing it to
 * its content, links (opened in a new tab, never inside the frame), clicks on highlights, the
 * selection's Comment button, and switching to another version.
 */

import { TextMap } from "./text.js";
import { Highlighter } from "./highlight.js";
import { composerSlot, frame, frameDocument, isFinalized, isLatest, panel, root, selectionButton, view, viewPath } from "./page.js";
import { activate, drawThreads, scheduleLayout, scrollToFrameRect, watchStubs } from "./threads.js";
import { onKeyDown } from "./keys.js";

let frameResets = 0;

/** @type {Array<() => void>} */
const afterFrameReady = [];

/** Runs `callback` once the document is shown and its highlights drawn (now, if they are). */
export function whenFrameReady(callback) {
  afterFrameReady.push(callback);
  if (view.map) afterFrameReady.splice(0).forEach((ready) => ready());
}

function onFrameLoad() {
  const doc = frameDocument();
  // A document that navigated its frame (a refresh, a link) is put back.
  if (!doc || doc.location.pathname !== viewPath()) {
    if (frameResets++ < 3) frame.src = root.dataset.viewUrl ?? "about:blank";
    return;
  }
  const frameWindow = /** @type {Window & typeof globalThis} */ (frame.contentWindow);
  view.map = new TextMap(doc);
  view.highlighter = new Highlighter(frameWindow);
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
  const map = view.map;
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
  for (const [id, passage] of view.passages) {
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
  if (!doc || !view.map || composing || !isLatest() || isFinalized() || !selection || selection.isCollapsed || selection.rangeCount === 0) {
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

/** Shows version `versionId` (the latest) in the frame, then runs `then`. */
export function switchToVersion(versionId, then) {
  root.dataset.version = versionId;
  root.dataset.latest = versionId;
  root.dataset.viewUrl = (root.dataset.viewPattern ?? "")
    .replace("{review_id}", encodeURIComponent(root.dataset.review ?? ""))
    .replace("{version_id}", encodeURIComponent(versionId));
  const url = new URL(location.href);
  url.searchParams.delete("version");
  history.replaceState(null, "", url);
  document.getElementById("new-version-banner")?.setAttribute("hidden", "");
  view.map = null;
  frameResets = 0;
  whenFrameReady(then);
  frame.src = root.dataset.viewUrl;
}

/** Whether the frame shows its document, loaded, and the screen has not taken it up yet. */
function frameLoadedUnseen() {
  const doc = frameDocument();
  return !view.map && doc?.readyState === "complete" && doc.location.pathname === viewPath();
}

/** Takes up the frame's document, now if it is loaded, else when it is. */
export function watchFrame() {
  frame.addEventListener("load", onFrameLoad);
  if (frameLoadedUnseen()) onFrameLoad();
  // A load event that fired between the check above and the listener (or while this module was
  // still loading) would leave the screen waiting forever: look again until the frame is taken up.
  const frameWatch = window.setInterval(() => {
    if (view.map) window.clearInterval(frameWatch);
    else if (frameLoadedUnseen()) onFrameLoad();
  }, 250);
}
