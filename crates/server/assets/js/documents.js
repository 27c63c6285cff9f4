// @ts-check
/**
 * The documents screen's upload: the form goes to the API (`POST /api/reviews/import-html`,
 * the same use case agents call) with the session's CSRF token, shows its progress, and opens
 * the new document's review screen. What was chosen stays in the form when the upload fails.
 */

import { csrfToken } from "./app.js";

const form = /** @type {HTMLFormElement} */ (document.getElementById("upload"));
const toggle = /** @type {HTMLButtonElement} */ (document.getElementById("upload-toggle"));
const progress = /** @type {HTMLProgressElement} */ (document.getElementById("upload-progress"));
const status = /** @type {HTMLElement} */ (document.getElementById("upload-status"));
const submit = /** @type {HTMLButtonElement} */ (form.querySelector('button[type="submit"]'));

function show(open) {
  form.hidden = !open;
  toggle.setAttribute("aria-expanded", String(open));
  if (open) /** @type {HTMLInputElement} */ (form.elements.namedItem("file")).focus();
  else toggle.focus();
}

toggle.addEventListener("click", () => show(form.hidden));
document.getElementById("upload-cancel")?.addEventListener("click", () => show(false));

/** The message of the API's JSON error body, or a sentence about the status. */
function problemOf(request) {
  try {
    const body = JSON.parse(request.responseText);
    if (body && typeof body.message === "string") return body.message;
  } catch {
    // Not JSON (a proxy's page): fall through.
  }
  return request.status ? `The upload was refused (HTTP ${request.status}).` : "The service could not be reached.";
}

form.addEventListener("submit", (event) => {
  event.preventDefault();
  const data = new FormData(form);
  // Empty optional fields are left out rather than sent as "".
  for (const name of ["title", "tags", "project"]) {
    if (!String(data.get(name) ?? "").trim()) data.delete(name);
  }
  const request = new XMLHttpRequest();
  request.open("POST", "/api/reviews/import-html");
  request.setRequestHeader("X-CSRF-Token", csrfToken());
  request.responseType = "text";
  progress.hidden = false;
  progress.value = 0;
  submit.disabled = true;
  status.textContent = "Uploading…";
  request.upload.addEventListener("progress", (update) => {
    if (!update.lengthComputable) return;
    progress.value = Math.round((update.loaded / update.total) * 100);
    status.textContent = `Uploading… ${progress.value} %`;
  });
  request.upload.addEventListener("load", () => {
    progress.value = 100;
    status.textContent = "Reading the document…";
  });
  const fail = () => {
    submit.disabled = false;
    progress.hidden = true;
    status.textContent = "";
    const notice = document.createElement("span");
    notice.className = "notice";
    notice.setAttribute("role", "alert");
    const problem = problemOf(request).replace(/[^.!?]$/, "$&.");
    notice.textContent = `${problem} Nothing was lost; fix it and upload again.`;
    status.replaceChildren(notice);
  };
  request.addEventListener("load", () => {
    if (request.status !== 201) return fail();
    const review = JSON.parse(request.responseText).review;
    status.textContent = "Uploaded. Opening it…";
    location.assign(`/reviews/${encodeURIComponent(review.reviewId)}`);
  });
  request.addEventListener("error", fail);
  request.send(data);
});
