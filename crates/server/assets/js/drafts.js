// @ts-check
/**
 * Drafts: what a person types into a field marked `data-draft-key="…"` is kept in this
 * browser's localStorage until the write it was meant for succeeds. So text is never lost to
 * a re-rendered panel, a reload, a network error or a session that ended (signing in again in
 * another tab and coming back finds it in place).
 */

const PREFIX = "docreview:draft:";
/** Drafts older than this are dropped (a week). */
const MAX_AGE_MS = 7 * 24 * 3600 * 1000;

/** @param {string} key */
export function loadDraft(key) {
  try {
    const raw = localStorage.getItem(PREFIX + key);
    if (!raw) return null;
    const draft = JSON.parse(raw);
    if (typeof draft?.text !== "string" || Date.now() - draft.at > MAX_AGE_MS) {
      localStorage.removeItem(PREFIX + key);
      return null;
    }
    return draft;
  } catch {
    return null;
  }
}

/**
 * @param {string} key
 * @param {string} text
 * @param {object} [extra] what else the draft needs to be re-offered (e.g. its quote)
 */
export function saveDraft(key, text, extra = {}) {
  try {
    if (text.trim() === "") localStorage.removeItem(PREFIX + key);
    else localStorage.setItem(PREFIX + key, JSON.stringify({ ...extra, text, at: Date.now() }));
  } catch {
    // Storage full or disabled: the text is still in the field.
  }
}

/** @param {string} key */
export function clearDraft(key) {
  try {
    localStorage.removeItem(PREFIX + key);
  } catch {
    // Nothing to do.
  }
}

/** Every draft whose key starts with `prefix`, as `[key, draft]` pairs. */
export function draftsStartingWith(prefix) {
  /** @type {Array<[string, any]>} */
  const found = [];
  try {
    for (let i = 0; i < localStorage.length; i++) {
      const key = localStorage.key(i);
      if (key?.startsWith(PREFIX + prefix)) {
        const draft = loadDraft(key.slice(PREFIX.length));
        if (draft) found.push([key.slice(PREFIX.length), draft]);
      }
    }
  } catch {
    // No storage: no drafts.
  }
  return found;
}

/** Fills untouched draft fields under `root` with their saved text. */
export function restoreDrafts(root) {
  const fields = root instanceof HTMLElement && root.matches("[data-draft-key]")
    ? [root]
    : Array.from(root.querySelectorAll("[data-draft-key]"));
  for (const field of fields) {
    if (!(field instanceof HTMLTextAreaElement || field instanceof HTMLInputElement)) continue;
    const draft = loadDraft(field.dataset.draftKey ?? "");
    // Only into a field nobody has typed in yet (an edit form starts with the current text).
    if (draft && field.value === field.defaultValue && draft.text !== field.value) {
      field.value = draft.text;
      field.dispatchEvent(new CustomEvent("draft-restored", { bubbles: true }));
    }
  }
}

/** Saves draft fields under `root` as they are typed into. */
export function watchDrafts(root) {
  root.addEventListener("input", (event) => {
    const field = event.target;
    if ((field instanceof HTMLTextAreaElement || field instanceof HTMLInputElement) && field.dataset.draftKey) {
      saveDraft(field.dataset.draftKey, field.value);
    }
  });
}
