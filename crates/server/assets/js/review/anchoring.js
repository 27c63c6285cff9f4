// @ts-check
/**
 * Anchoring between the server's anchors and the frame's DOM, in the manner of the Hypothesis
 * client's `anchoring/` modules: a passage is found at its position when the text there is its
 * quote, else at the occurrence of the quote that best fits its context and position; a
 * selection is described by its quote, a little context on each side, and its position.
 * Offsets from and to the server are code points; everything here converts through `TextMap`.
 */

/** Code points of context kept on each side of a quote (the server's QUOTE_CONTEXT). */
export const QUOTE_CONTEXT = 32;

/**
 * Where an anchor's passage is in the frame's text, as UTF-16 offsets; null when it is not.
 * @param {import("./text.js").TextMap} map
 * @param {{ start: number, end: number, exact?: string, prefix?: string, suffix?: string, fuzzy?: boolean }} anchor
 */
export function locate(map, anchor) {
  const start = map.toUtf16(anchor.start);
  const end = map.toUtf16(anchor.end);
  if (end <= start) return null;
  const exact = anchor.exact ?? "";
  // A fuzzy anchor's text differs from its (original) quote by definition: trust the position.
  if (!exact || anchor.fuzzy || map.text.slice(start, end) === exact) {
    return end <= map.text.length ? { start, end } : null;
  }
  return matchQuote(map.text, exact, anchor.prefix ?? "", anchor.suffix ?? "", start);
}

/**
 * The occurrence of `exact` in `text` that best fits its context and the position hint.
 * @returns {{ start: number, end: number } | null}
 */
export function matchQuote(text, exact, prefix, suffix, hint) {
  let best = null;
  let bestScore = -Infinity;
  for (let at = text.indexOf(exact); at !== -1; at = text.indexOf(exact, at + 1)) {
    const before = text.slice(Math.max(0, at - prefix.length), at);
    const after = text.slice(at + exact.length, at + exact.length + suffix.length);
    const score =
      2 * sharedSuffix(before, prefix) +
      2 * sharedPrefix(after, suffix) -
      Math.abs(at - hint) / Math.max(text.length, 1);
    if (score > bestScore) {
      bestScore = score;
      best = { start: at, end: at + exact.length };
    }
  }
  return best;
}

function sharedPrefix(a, b) {
  let n = 0;
  while (n < a.length && n < b.length && a[n] === b[n]) n++;
  return n;
}

function sharedSuffix(a, b) {
  let n = 0;
  while (n < a.length && n < b.length && a[a.length - 1 - n] === b[b.length - 1 - n]) n++;
  return n;
}

/**
 * The locator of a selection: its quote with context, and its position, in code points.
 * Leading and trailing white space are left out. Null for a selection without text.
 * @param {import("./text.js").TextMap} map
 * @param {Range} range
 */
export function describe(map, range) {
  let start = map.offsetOf(range.startContainer, range.startOffset);
  let end = map.offsetOf(range.endContainer, range.endOffset);
  while (start < end && /\s/.test(map.text[start])) start++;
  while (end > start && /\s/.test(map.text[end - 1])) end--;
  if (end <= start) return null;
  const startCp = map.toCodePoints(start);
  const endCp = map.toCodePoints(end);
  const prefixFrom = map.toUtf16(Math.max(0, startCp - QUOTE_CONTEXT));
  const suffixTo = map.toUtf16(endCp + QUOTE_CONTEXT);
  return {
    exact: map.text.slice(map.toUtf16(startCp), map.toUtf16(endCp)),
    prefix: map.text.slice(prefixFrom, map.toUtf16(startCp)),
    suffix: map.text.slice(map.toUtf16(endCp), suffixTo),
    start: startCp,
    end: endCp,
  };
}
