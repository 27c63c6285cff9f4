// @ts-check
/**
 * Previews of Markdown bodies: a button marked `data-preview` shows, under its form's body
 * field, the body as it will look once sent. The server renders it (`POST /markdown-preview`,
 * the same renderer as every card), so the preview is exactly what will be shown. While the
 * preview is open it follows what is typed.
 */

import { csrfToken } from "./app.js";

/** Forms whose preview is open, each with the timer of its pending refresh. */
const open = new WeakMap();

/** @param {HTMLFormElement} form */
function previewArea(form) {
  let area = form.querySelector(".preview");
  if (!(area instanceof HTMLElement)) {
    area = document.createElement("div");
    area.className = "preview";
    area.setAttribute("aria-live", "polite");
    area.setAttribute("aria-label", "Preview");
    form.querySelector("textarea[name=body]")?.after(area);
  }
  return /** @type {HTMLElement} */ (area);
}

/** @param {HTMLFormElement} form */
async function refresh(form) {
  const field = form.querySelector("textarea[name=body]");
  if (!(field instanceof HTMLTextAreaElement)) return;
  const area = previewArea(form);
  try {
    const response = await fetch(document.body.dataset.previewUrl ?? "", {
      method: "POST",
      headers: { "Content-Type": "application/x-www-form-urlencoded", "X-CSRF-Token": csrfToken() },
      body: new URLSearchParams({ body: field.value }),
      credentials: "same-origin",
    });
    if (!open.has(form)) return;
    if (!response.ok) {
      area.textContent = `The preview could not be made (HTTP ${response.status}); what you typed is still here.`;
      return;
    }
    // The server's answer is the cleaned rendering (ammonia): safe to insert.
    area.innerHTML = await response.text();
  } catch {
    area.textContent = "The preview could not be made (the service is out of reach); what you typed is still here.";
  }
}

/** @param {HTMLFormElement} form @param {HTMLElement} button */
function toggle(form, button) {
  if (open.has(form)) {
    window.clearTimeout(open.get(form));
    open.delete(form);
    form.querySelector(".preview")?.remove();
    button.setAttribute("aria-pressed", "false");
    button.textContent = "Preview";
    return;
  }
  open.set(form, 0);
  button.setAttribute("aria-pressed", "true");
  button.textContent = "Hide preview";
  previewArea(form).textContent = "Rendering…";
  refresh(form);
}

document.addEventListener("click", (event) => {
  const button = event.target instanceof Element ? event.target.closest("[data-preview]") : null;
  const form = button?.closest("form");
  if (!(button instanceof HTMLElement) || !(form instanceof HTMLFormElement)) return;
  event.preventDefault();
  toggle(form, button);
});

document.addEventListener("input", (event) => {
  const field = event.target;
  if (!(field instanceof HTMLTextAreaElement) || field.name !== "body") return;
  const form = field.form;
  if (!form || !open.has(form)) return;
  window.clearTimeout(open.get(form));
  open.set(form, window.setTimeout(() => refresh(form), 250));
});
