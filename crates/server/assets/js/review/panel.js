// @ts-check
/**
 * The comments panel's updates. The server renders every thread; this module puts what it sends
 * in place without downloading the panel again:
 *
 * - a write (a form in the panel, the composer) answers with `<div class="panel-update">`: the
 *   thread written as it now stands and the counts beside it;
 * - a live change asks `POST /reviews/{id}/threads/sync` with the stamp of every thread the page
 *   holds, and gets the threads that are new or changed, the ids no longer shown, and the counts;
 * - threads come one by one (`GET /reviews/{id}/threads/{commentId}`) or several at a time
 *   (`?ids=`), e.g. as the reader comes close to threads the page holds only in short.
 *
 * An update holds `<article class="thread">` (put in place of the card with its id, or inserted
 * into its group at its place in document order), `<i class="thread-removed">` (taken away) and
 * elements marked `data-replace` (the counts and filters, replacing those with their id). A whole
 * `#panel` (a filter changed, a new version) replaces the panel.
 *
 * Nothing here sets a `style` attribute from markup: the page's policy (`style-src 'self'`)
 * blocks those; positions are set through `element.style`, which it allows.
 */

import { csrfToken, localizeTimes, showToast } from "../app.js";
import { restoreDrafts } from "../drafts.js";

/**
 * What an update changed: `added` are the threads the page did not hold before, `live` whether
 * it came from a change made elsewhere (the events stream).
 * @typedef {{ whole: boolean, changed: string[], added: string[], removed: string[], live: boolean }} Applied
 */

/** @type {(applied: Applied) => void} */
let onApplied = () => {};

/** Sets what runs after every update put in place (highlights, layout, counts). */
export function afterApply(callback) {
  onApplied = callback;
}

function panel() {
  return /** @type {HTMLElement | null} */ (document.getElementById("panel"));
}

/** Where a card sits in document order: `data-order`, else its passage's start. */
function orderOf(card) {
  return Number(card.dataset.order ?? card.dataset.start);
}

/** The key a thread is ordered by within its group (document order; creation in a tie). */
function before(a, b, group) {
  const orderA = group === "anchored" ? orderOf(a) : 0;
  const orderB = group === "anchored" ? orderOf(b) : 0;
  if (orderA !== orderB) return orderA < orderB;
  return (a.dataset.comment ?? "") < (b.dataset.comment ?? "");
}

/** Puts `card` into its group at its place. */
function insertInOrder(root, card) {
  const group = card.dataset.group ?? "anchored";
  const section = root.querySelector(`section[data-group="${group}"]`);
  if (!section) return;
  const cards = /** @type {HTMLElement[]} */ (Array.from(section.querySelectorAll(":scope > .thread")));
  // Binary search: the cards are in order.
  let low = 0;
  let high = cards.length;
  while (low < high) {
    const middle = (low + high) >> 1;
    if (before(cards[middle], card, group)) low = middle + 1;
    else high = middle;
  }
  if (low < cards.length) cards[low].before(card);
  else section.append(card);
}

/** Whether `html` is something this module puts in place. */
export function isUpdate(html) {
  return /^\s*<div (class="panel-update"|id="panel")/.test(html);
}

/**
 * Puts an update (or a whole panel) in place. Returns what changed, or null when nothing
 * applied (not an update, or older than what the page shows).
 * @param {string} html
 * @param {boolean} [live] whether it brings a change made elsewhere
 * @returns {Applied | null}
 */
export function apply(html, live = false) {
  const current = panel();
  if (!current) return null;
  const template = document.createElement("template");
  template.innerHTML = html;
  const root = template.content.firstElementChild;
  if (!(root instanceof HTMLElement)) return null;
  if (root.id === "panel") {
    current.replaceWith(root);
    prepare(root);
    const applied = { whole: true, changed: [], added: [], removed: [], live };
    onApplied(applied);
    return applied;
  }
  if (!root.classList.contains("panel-update")) return null;
  // An answer made before what the page already shows would put older threads back.
  if (Number(root.dataset.revision) < Number(current.dataset.revision)) return null;
  /** @type {Applied} */
  const applied = { whole: false, changed: [], added: [], removed: [], live };
  for (const node of Array.from(root.children)) {
    if (!(node instanceof HTMLElement)) continue;
    if (node.matches("article.thread")) {
      const id = node.dataset.comment ?? "";
      const old = document.getElementById(`thread-${id}`);
      const oldGroup = /** @type {HTMLElement | null} */ (old?.closest("section[data-group]") ?? null);
      if (old instanceof HTMLElement && oldGroup?.dataset.group === node.dataset.group) {
        // Keep where it stands and how it is shown until the layout runs again.
        node.style.transform = old.style.transform;
        for (const name of ["is-active", "is-expanded"]) {
          if (old.classList.contains(name)) node.classList.add(name);
        }
        const focused = document.activeElement === old;
        old.replaceWith(node);
        if (focused) node.focus({ preventScroll: true });
      } else {
        if (!old) applied.added.push(id);
        old?.remove();
        insertInOrder(current, node);
      }
      prepare(node);
      applied.changed.push(id);
    } else if (node.matches(".thread-removed")) {
      const id = node.dataset.comment ?? "";
      document.getElementById(`thread-${id}`)?.remove();
      applied.removed.push(id);
    } else if (node.id && node.hasAttribute("data-replace")) {
      const old = document.getElementById(node.id);
      if (old && current.contains(old)) {
        old.replaceWith(node);
        prepare(node);
      }
    }
  }
  current.dataset.revision = root.dataset.revision ?? current.dataset.revision;
  current.dataset.now = root.dataset.now ?? current.dataset.now;
  for (const section of current.querySelectorAll("section[data-group]")) {
    const group = /** @type {HTMLElement} */ (section);
    if (group.dataset.group !== "anchored") group.hidden = !group.querySelector(":scope > .thread");
  }
  onApplied(applied);
  return applied;
}

/** What every element put in place needs: htmx on its forms, local times, drafts. */
function prepare(element) {
  // @ts-ignore htmx is a global from the vendored script
  window.htmx.process(element);
  localizeTimes(element);
  restoreDrafts(element);
}

/**
 * A request of the panel's own (not a form): with the session's token and the page's address
 * (its filters and version), as htmx would send them. A refusal shows as a notice.
 * @param {string} method
 * @param {string} url
 * @param {URLSearchParams} [body]
 * @returns {Promise<string | null>} the answer's HTML, or null
 */
export async function request(method, url, body) {
  let response;
  try {
    response = await fetch(url, {
      method,
      body,
      credentials: "same-origin",
      headers: { "HX-Request": "true", "HX-Current-URL": location.href, "X-CSRF-Token": csrfToken() },
    });
  } catch {
    showToast("The service could not be reached. Nothing was lost; try again in a moment.");
    return null;
  }
  const text = await response.text();
  if (response.ok) return text;
  if (response.headers.get("HX-Retarget") === "#toasts") {
    const area = document.getElementById("toasts");
    const template = document.createElement("template");
    template.innerHTML = text;
    area?.append(template.content);
  }
  return null;
}

/**
 * A path the page was given (`data-panel-url`, …): the server writes every path once.
 * @param {"panelUrl" | "threadsUrl" | "syncUrl"} name
 */
function pathOf(name) {
  return document.getElementById("review")?.dataset[name] ?? "";
}

/** The panel as a whole again (a filter changed, a new version arrived, the page came back). */
export async function refresh() {
  const html = await request("GET", pathOf("panelUrl"));
  if (html) apply(html);
}

let syncing = false;
let syncAgain = false;

/** Asks for the threads that changed since the page got them, and puts them in place. */
export async function sync() {
  if (syncing) {
    syncAgain = true;
    return;
  }
  syncing = true;
  try {
    do {
      syncAgain = false;
      const seen = Array.from(panel()?.querySelectorAll(".thread") ?? [], (element) => {
        const card = /** @type {HTMLElement} */ (element);
        return `${card.dataset.comment}:${card.dataset.stamp}`;
      }).join(" ");
      const html = await request(
        "POST",
        pathOf("syncUrl"),
        new URLSearchParams({ seen }),
      );
      if (html) apply(html, true);
    } while (syncAgain);
  } finally {
    syncing = false;
  }
}

/** Loads the threads `ids` as they stand now. */
export async function load(ids) {
  if (ids.length === 0) return;
  const query = new URLSearchParams({ ids: ids.join(",") });
  const html = await request("GET", `${pathOf("threadsUrl")}?${query}`);
  if (html && !apply(html)) {
    // Older than a write that arrived meanwhile: ask once more.
    const again = await request("GET", `${pathOf("threadsUrl")}?${query}`);
    if (again) apply(again);
  }
}
