// @ts-check
/**
 * The review screen's Settings and Share dialogs: opening them (their bodies come from the
 * server, fresh each time), keeping the screen's shortcuts out of them, tag suggestions,
 * role changes that save at once, the delete confirmation, and new versions: chosen or dropped,
 * sent to the API (`POST /api/reviews/{id}/import-html`, the same use case agents call) with the
 * version the dialog was opened on, so an upload that raced another says so and keeps the file.
 */

import { csrfToken } from "../app.js";

/** @param {string} id */
function openDialog(id) {
  const dialog = document.getElementById(id);
  if (!(dialog instanceof HTMLDialogElement)) return;
  dialog.showModal();
  const body = dialog.querySelector("[hx-get]");
  // @ts-ignore htmx global
  if (body) window.htmx.trigger(body, "open-dialog");
}

document.getElementById("settings-button")?.addEventListener("click", () => openDialog("settings-dialog"));
document.getElementById("share-button")?.addEventListener("click", () => openDialog("share-dialog"));

for (const dialog of document.querySelectorAll("dialog.dialog")) {
  // Keys pressed in a dialog are the dialog's: the screen's shortcuts (j, k, c, d, …) stay
  // behind it. Escape still closes it (the browser's own cancel), Ctrl+Enter sends its form.
  dialog.addEventListener("keydown", (event) => {
    const key = /** @type {KeyboardEvent} */ (event);
    if (key.key === "Enter" && (key.ctrlKey || key.metaKey)) {
      const form = key.target instanceof Element ? key.target.closest("form") : null;
      if (form instanceof HTMLFormElement && form.method !== "dialog") {
        key.preventDefault();
        form.requestSubmit();
      }
    }
    event.stopPropagation();
  });
  // After each answer: a refusal puts the focus back into its form; a change is announced.
  dialog.addEventListener("htmx:afterSwap", () => {
    const notice = dialog.querySelector(".notice[role=alert]");
    const field = notice?.closest("form, section")?.querySelector("input:not([type=hidden]), select, textarea");
    if (field instanceof HTMLElement) return field.focus();
    const done = dialog.querySelector(".done");
    if (done instanceof HTMLElement) {
      done.tabIndex = -1;
      done.focus();
    }
  });
}

document.addEventListener("click", (event) => {
  const target = event.target instanceof Element ? event.target : null;
  if (!target?.closest("dialog.dialog")) return;
  const tag = target.closest("[data-add-tag]");
  if (tag instanceof HTMLElement) return addTag(tag);
  const open = target.closest("[data-confirm-open]");
  if (open instanceof HTMLElement) return confirmDelete(open, true);
  const cancel = target.closest("[data-confirm-cancel]");
  if (cancel instanceof HTMLElement) return confirmDelete(cancel, false);
  const again = target.closest("[data-upload-again]");
  if (again instanceof HTMLElement) {
    const form = again.closest("form");
    if (form instanceof HTMLFormElement) {
      form.dataset.base = again.dataset.uploadAgain ?? form.dataset.base;
      upload(form);
    }
  }
});

/** Adds a suggested tag to the tags field (once), and takes the suggestion away. */
function addTag(button) {
  const field = button.closest("form")?.querySelector("input[name=tags]");
  if (!(field instanceof HTMLInputElement)) return;
  const tag = button.dataset.addTag ?? "";
  const tags = field.value.split(",").map((t) => t.trim()).filter(Boolean);
  if (!tags.includes(tag)) tags.push(tag);
  field.value = tags.join(", ");
  button.remove();
  field.focus();
}

/** Shows (or hides) the confirmation that names the document before deleting it. */
function confirmDelete(button, show) {
  const section = button.closest(".danger-zone");
  const confirm = section?.querySelector(".confirm-delete");
  const opener = section?.querySelector("[data-confirm-open]");
  if (!(confirm instanceof HTMLElement) || !(opener instanceof HTMLElement)) return;
  confirm.hidden = !show;
  opener.hidden = show;
  const focus = show ? confirm.querySelector("[data-confirm-cancel]") : opener;
  if (focus instanceof HTMLElement) focus.focus();
}

// A role chosen for a person is saved at once.
document.addEventListener("change", (event) => {
  const select = event.target;
  if (select instanceof HTMLSelectElement && select.dataset.autosubmit !== undefined) select.form?.requestSubmit();
  if (select instanceof HTMLInputElement && select.type === "file") showChosen(select);
});

// ---------------------------------------------------------------------------------------
// New versions: the file picker or a drop, then the API.

/** @param {HTMLInputElement} input */
function showChosen(input) {
  const name = input.closest("form")?.querySelector("[data-file-name]");
  const file = input.files?.[0];
  if (name) name.textContent = file ? `Chosen: ${file.name} (${Math.max(1, Math.round(file.size / 1024))} KB)` : "";
}

/** @param {Event} event */
function dropzoneOf(event) {
  return event.target instanceof Element ? event.target.closest("[data-dropzone]") : null;
}

for (const type of ["dragenter", "dragover"]) {
  document.addEventListener(type, (event) => {
    const zone = dropzoneOf(event);
    if (!zone) return;
    event.preventDefault();
    zone.classList.add("is-dragging");
  });
}
document.addEventListener("dragleave", (event) => {
  const zone = dropzoneOf(event);
  if (zone && !(event instanceof DragEvent && zone.contains(/** @type {Node | null} */ (event.relatedTarget)))) zone.classList.remove("is-dragging");
});
document.addEventListener("drop", (event) => {
  const zone = dropzoneOf(event);
  if (!zone || !(event instanceof DragEvent)) return;
  event.preventDefault();
  zone.classList.remove("is-dragging");
  const input = zone.querySelector("input[type=file]");
  const files = event.dataTransfer?.files;
  if (!(input instanceof HTMLInputElement) || !files || files.length === 0) return;
  input.files = files;
  showChosen(input);
});

document.addEventListener("submit", (event) => {
  const form = event.target;
  if (!(form instanceof HTMLFormElement) || form.id !== "version-upload") return;
  event.preventDefault();
  upload(form);
});

/**
 * Says `message` in the upload's status area, with `extra` (links, buttons) after it.
 * @param {HTMLFormElement} form @param {string} message @param {"notice" | "done" | ""} kind
 * @param {Node[]} [extra]
 */
function say(form, message, kind, extra = []) {
  const status = form.querySelector("[data-upload-status]");
  if (!status) return;
  const text = document.createElement("p");
  text.textContent = message;
  if (kind) text.className = kind;
  if (kind === "notice") text.setAttribute("role", "alert");
  status.replaceChildren(text, ...extra);
  text.scrollIntoView({ block: "nearest" });
}

/** The API's JSON error body, if the answer is one. */
function errorOf(request) {
  try {
    const body = JSON.parse(request.responseText);
    return body && typeof body.message === "string" ? body : null;
  } catch {
    return null;
  }
}

/** @param {HTMLFormElement} form */
function upload(form) {
  const input = form.querySelector("input[type=file]");
  const file = input instanceof HTMLInputElement ? input.files?.[0] : undefined;
  if (!file) {
    say(form, "Choose an HTML file first, or drop one on the box above.", "notice");
    if (input instanceof HTMLElement) input.focus();
    return;
  }
  const reviewId = form.dataset.review ?? "";
  const data = new FormData();
  data.append("file", file);
  const label = String(new FormData(form).get("label") ?? "").trim();
  if (label) data.append("label", label);
  data.append("mode", String(new FormData(form).get("mode") ?? "add_version"));
  data.append("baseVersionId", form.dataset.base ?? "");
  const progress = form.querySelector("progress");
  const submit = form.querySelector("button[type=submit]");
  const request = new XMLHttpRequest();
  request.open("POST", `/api/reviews/${encodeURIComponent(reviewId)}/import-html`);
  request.setRequestHeader("X-CSRF-Token", csrfToken());
  if (progress) {
    progress.hidden = false;
    progress.value = 0;
  }
  if (submit instanceof HTMLButtonElement) submit.disabled = true;
  say(form, "Uploading…", "");
  request.upload.addEventListener("progress", (update) => {
    if (!update.lengthComputable || !progress) return;
    progress.value = Math.round((update.loaded / update.total) * 100);
  });
  request.upload.addEventListener("load", () => say(form, "Reading the document and moving the comments onto it…", ""));
  const finish = () => {
    if (submit instanceof HTMLButtonElement) submit.disabled = false;
    if (progress) progress.hidden = true;
  };
  request.addEventListener("load", () => {
    finish();
    const page = `/reviews/${encodeURIComponent(reviewId)}`;
    if (request.status === 200 || request.status === 201) {
      const answer = JSON.parse(request.responseText);
      const warnings = Array.isArray(answer.warnings) ? answer.warnings : [];
      if (warnings.length === 0) {
        say(form, "Uploaded. Opening it…", "done");
        location.assign(page);
        return;
      }
      const open = document.createElement("a");
      open.href = page;
      open.className = "button primary";
      open.textContent = "Open the new version";
      const list = document.createElement("ul");
      list.className = "upload-warnings";
      for (const warning of warnings) {
        const item = document.createElement("li");
        item.textContent = String(warning.message ?? "");
        list.append(item);
      }
      say(form, "Uploaded, with something to know:", "done", [list, open]);
      return;
    }
    const problem = errorOf(request);
    if (request.status === 409 && problem?.error === "stale_target_version") {
      const again = document.createElement("button");
      again.type = "button";
      again.className = "primary";
      again.dataset.uploadAgain = problem.latestVersionId ?? "";
      again.textContent = "Upload it on top of the newer version";
      const look = document.createElement("a");
      look.href = page;
      look.target = "_blank";
      look.rel = "noopener";
      look.textContent = "Look at the newer version first (new tab)";
      say(
        form,
        "Someone added a newer version while you were choosing this file, so nothing was uploaded. Your file is still chosen.",
        "notice",
        [again, document.createTextNode(" "), look],
      );
      return;
    }
    const message = problem?.message ?? (request.status ? `The upload was refused (HTTP ${request.status}).` : "The service could not be reached.");
    say(form, `${message.replace(/[^.!?]$/, "$&.")} Nothing was lost; your file is still chosen.`, "notice");
  });
  request.addEventListener("error", () => {
    finish();
    say(form, "The service could not be reached. Nothing was lost; your file is still chosen.", "notice");
  });
  request.send(data);
}
