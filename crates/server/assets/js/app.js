// @ts-check
/**
 * What every page of the app needs: htmx requests carry the session's CSRF token, notices
 * (toasts) can be dismissed, times show in the reader's zone, and text typed into a field
 * marked `data-draft-key` survives reloads, swaps, network errors and an ended session.
 */

import { restoreDrafts, watchDrafts } from "./drafts.js";

/** The session's CSRF token, from the page's meta tag. */
export function csrfToken() {
  const meta = document.querySelector('meta[name="csrf-token"]');
  return meta instanceof HTMLMetaElement ? meta.content : "";
}

document.addEventListener("htmx:configRequest", (event) => {
  const detail = /** @type {CustomEvent} */ (event).detail;
  detail.headers["X-CSRF-Token"] = csrfToken();
});

// A request that never got an answer (network down, server restarting): say so; the text
// typed stays where it was (htmx swaps nothing) and in the draft store.
document.addEventListener("htmx:sendError", () => {
  showToast("The service could not be reached. Nothing was lost; try again in a moment.");
});

/** Shows a short notice in the page's toast area. */
export function showToast(message) {
  const area = document.getElementById("toasts");
  if (!area) return;
  const toast = document.createElement("div");
  toast.className = "toast";
  toast.setAttribute("role", "alert");
  const text = document.createElement("p");
  text.textContent = message;
  const close = document.createElement("button");
  close.type = "button";
  close.className = "toast-close";
  close.dataset.dismiss = "";
  close.setAttribute("aria-label", "Dismiss");
  close.textContent = "×";
  toast.append(text, close);
  area.append(toast);
  setTimeout(() => toast.remove(), 12000);
}

document.addEventListener("click", (event) => {
  const target = event.target instanceof Element ? event.target : null;
  const dismiss = target?.closest("[data-dismiss]");
  if (dismiss) dismiss.closest(".toast")?.remove();
});

/** Space kept between a popover and the viewport's edges, in pixels. */
const EDGE = 8;

/**
 * Keeps an open popover (`details.menu > .menu-body`) inside the viewport: it opens below its
 * button, aligned to the button's left edge, and is moved left (or right) as far as it would
 * otherwise run past an edge. Also when its content arrives later (htmx) or the window resizes.
 */
export function keepInViewport(menu) {
  const body = menu.querySelector(":scope > .menu-body");
  if (!(body instanceof HTMLElement) || !menu.open) return;
  body.style.translate = "";
  const rect = body.getBoundingClientRect();
  const width = document.documentElement.clientWidth;
  let shift = 0;
  if (rect.right > width - EDGE) shift = width - EDGE - rect.right;
  if (rect.left + shift < EDGE) shift = EDGE - rect.left;
  if (shift) body.style.translate = `${Math.round(shift)}px 0`;
}

function openMenus() {
  return /** @type {HTMLDetailsElement[]} */ (Array.from(document.querySelectorAll("details.menu[open]")));
}

document.addEventListener(
  "toggle",
  (event) => {
    const menu = event.target;
    if (menu instanceof HTMLDetailsElement && menu.classList.contains("menu")) keepInViewport(menu);
  },
  true,
);
window.addEventListener("resize", () => openMenus().forEach(keepInViewport));
document.addEventListener("htmx:afterSettle", () => openMenus().forEach(keepInViewport));

const dateFormat = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "short" });

/** Shows every `<time datetime>` under `root` in the reader's time zone. */
export function localizeTimes(root) {
  for (const element of root.querySelectorAll("time[datetime]")) {
    const when = new Date(element.getAttribute("datetime") ?? "");
    if (!Number.isNaN(when.getTime())) element.textContent = dateFormat.format(when);
  }
  for (const element of root.querySelectorAll("time[data-millis]")) {
    const when = new Date(Number(element.getAttribute("data-millis")));
    if (!Number.isNaN(when.getTime())) {
      element.setAttribute("datetime", when.toISOString());
      element.textContent = dateFormat.format(when);
    }
  }
}

localizeTimes(document);
restoreDrafts(document);
watchDrafts(document);
document.addEventListener("htmx:load", (event) => {
  const element = /** @type {CustomEvent} */ (event).detail.elt;
  if (element instanceof Element) {
    localizeTimes(element);
    restoreDrafts(element);
  }
});
