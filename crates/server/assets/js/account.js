// @ts-check
/** The account page: a new token's Copy button (the value is also selectable by hand). */

import { showToast } from "./app.js";

for (const button of document.querySelectorAll("[data-copy]")) {
  button.addEventListener("click", async () => {
    const field = document.getElementById(/** @type {HTMLElement} */ (button).dataset.copy ?? "");
    if (!(field instanceof HTMLInputElement)) return;
    field.select();
    try {
      await navigator.clipboard.writeText(field.value);
      showToast(/** @type {HTMLElement} */ (button).dataset.copied ?? "Token copied. Keep it somewhere safe.");
    } catch {
      showToast("Copying was not allowed here; the token is selected, so copy it with Ctrl+C.");
    }
  });
}
