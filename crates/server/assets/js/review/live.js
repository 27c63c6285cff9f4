// @ts-check
/**
 * Changes made elsewhere: the review's events stream (new comments, a new version), a discreet
 * cue for comments that arrive out of view ("2 new comments"), and a notice when a run ends.
 */

import { showToast } from "../app.js";
import { refresh, sync } from "./panel.js";
import { isLatest, narrow, openDrawer, panel, reviewId, root } from "./page.js";
import { activate, layout } from "./threads.js";

/** The newest comments revision the events stream announced. */
let latestRevision = 0;

/** Whether a write of the screen is on its way (htmx marks its form meanwhile). */
function writing() {
  return document.querySelector("#panel form.htmx-request, #composer-slot form.htmx-request") !== null;
}

/** Asks for the threads changed since the page got them, unless a write's answer will come first. */
export function syncUnlessWriting() {
  if (!writing() && Number(panel()?.dataset.revision) < latestRevision) sync();
}

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
  // Reviewers, decisions, finalizing (or the title, tags, sharing): the review bar again.
  source.addEventListener("review", () => {
    clearTimeout(barTimer);
    barTimer = window.setTimeout(refreshBar, 50);
  });
  // A reaction moves no revision: ask for the threads whose stamp changed.
  source.addEventListener("reactions", () => {
    if (!writing()) sync();
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

let barTimer = 0;

/**
 * Puts the review bar as it now stands in place, unless the person is using it (a menu open, a
 * field focused), and keeps the page's finalized state with it (the composer reads it).
 */
function refreshBar() {
  const bar = document.getElementById("review-bar");
  const url = bar?.dataset.barUrl;
  if (!bar || !url || bar.querySelector("details[open]") || bar.contains(document.activeElement)) return;
  fetch(url, { headers: { "HX-Request": "true" } })
    .then((response) => (response.ok ? response.text() : null))
    .then((html) => {
      const current = document.getElementById("review-bar");
      if (!html || !current) return;
      const template = document.createElement("template");
      template.innerHTML = html;
      const fresh = template.content.firstElementChild;
      if (!(fresh instanceof HTMLElement) || fresh.id !== "review-bar") return;
      current.replaceWith(fresh);
      // @ts-ignore htmx global
      window.htmx.process(fresh);
      if (fresh.classList.contains("finalized")) root.dataset.finalized = "true";
      else delete root.dataset.finalized;
    })
    .catch(() => {});
}

/** Follows the review's changes while the page is shown. */
export function followLive() {
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
  arrivalsCue.addEventListener("click", () => {
    const [first] = arrivals;
    if (!first) return;
    forgetArrival(first);
    if (narrow.matches) openDrawer(false);
    activate(first);
  });
}

// Comments from elsewhere that arrive out of view are counted until seen; the cue goes to the
// first of them.

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
export function noticeArrivals(ids) {
  // Cards go beside their passages when the layout runs: place them before looking.
  if (ids.length > 0) layout();
  for (const id of ids) {
    const card = document.getElementById(`thread-${id}`);
    if (card && !inView(card) && !arrivals.includes(id)) arrivals.push(id);
  }
  showArrivals();
}

/** Watches the cards of the arrivals (a card replaced by an update is a new element). */
export function watchArrivals() {
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

// Runs: each one that starts or ends while the screen is open is announced.

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

let runsBefore = runStates();

/** Says so when a run completes, fails or is cancelled while the screen is open. */
export function announceRuns() {
  const now = runStates();
  if ([...now].some(([id, run]) => runsBefore.get(id)?.status !== run.status)) showRuns(now.size);
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

/**
 * The Runs menu as the runs now stand: its count, shown once there is a run, and its list asked
 * for again.
 * @param {number} count
 */
async function showRuns(count) {
  const menu = document.getElementById("runs-menu");
  const shown = document.getElementById("runs-count");
  if (!menu || !shown) return;
  shown.textContent = String(count);
  menu.hidden = count === 0;
  const response = await fetch(menu.dataset.runsUrl ?? "", { headers: { "HX-Request": "true" }, credentials: "same-origin" });
  if (!response.ok) return;
  const list = document.getElementById("run-list");
  const fresh = new DOMParser().parseFromString(await response.text(), "text/html").getElementById("run-list");
  if (list && fresh) {
    list.replaceWith(fresh);
    // @ts-ignore htmx global: the new list's Cancel buttons
    window.htmx.process(fresh);
  }
}
