// @ts-check
/**
 * The review screen's page: its elements, what the screen's modules share about the document
 * shown, and the drawer that holds the comments on a narrow screen. It imports nothing of the
 * screen's other modules, so each of them may start from it.
 */

/** @typedef {import("./text.js").TextMap} TextMap */
/** @typedef {import("./highlight.js").Highlighter} Highlighter */

export const root = /** @type {HTMLElement} */ (document.getElementById("review"));
export const frame = /** @type {HTMLIFrameElement} */ (document.getElementById("doc-frame"));
export const column = /** @type {HTMLElement} */ (document.getElementById("comments-column"));
export const composerSlot = /** @type {HTMLElement} */ (document.getElementById("composer-slot"));
export const selectionButton = /** @type {HTMLButtonElement} */ (document.getElementById("selection-button"));
export const narrow = window.matchMedia("(max-width: 900px)");
export const reviewId = root.dataset.review ?? "";

/**
 * The document shown and the threads drawn on it: `map` and `highlighter` are made when the frame
 * loads (null until then), `passages` are the drawn threads' passages by comment id (UTF-16
 * offsets in `map.text`), `activeId` is the current thread.
 * @type {{ map: TextMap | null, highlighter: Highlighter | null, passages: Map<string, { start: number, end: number }>, activeId: string | null }}
 */
export const view = { map: null, highlighter: null, passages: new Map(), activeId: null };

export function panel() {
  return /** @type {HTMLElement | null} */ (document.getElementById("panel"));
}

/** Whether the version shown is the latest (comments are written only there). */
export function isLatest() {
  return root.dataset.version === root.dataset.latest;
}

/** Whether the review is finalized (no comment can be written until it is reopened). */
export function isFinalized() {
  return root.dataset.finalized === "true";
}

export function frameDocument() {
  try {
    return frame.contentDocument;
  } catch {
    return null;
  }
}

/** The path the frame should show. */
export function viewPath() {
  return new URL(root.dataset.viewUrl ?? "", location.href).pathname;
}

const drawerToggle = /** @type {HTMLButtonElement} */ (document.getElementById("drawer-toggle"));

export function openDrawer(focus = true) {
  root.classList.add("drawer-open");
  drawerToggle.setAttribute("aria-expanded", "true");
  if (focus) column.querySelector("button, [tabindex]")?.dispatchEvent(new FocusEvent("focus"));
  if (focus) /** @type {HTMLElement | null} */ (column.querySelector("#drawer-close"))?.focus();
}

export function closeDrawer() {
  root.classList.remove("drawer-open");
  drawerToggle.setAttribute("aria-expanded", "false");
  drawerToggle.focus();
}

/** The drawer's own buttons. */
export function wireDrawer() {
  drawerToggle.addEventListener("click", () => (root.classList.contains("drawer-open") ? closeDrawer() : openDrawer()));
  document.getElementById("drawer-close")?.addEventListener("click", closeDrawer);
}
