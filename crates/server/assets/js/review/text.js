// @ts-check
/**
 * The document frame's text, as the server counts it (DESIGN.md §4.3): the text nodes of
 * `<body>` in document order, skipping `<script>`, `<style>` and `<template>`.
 *
 * The server counts offsets in Unicode code points; the DOM counts UTF-16 code units. This
 * module is the one place that converts between the two: everything outside it speaks UTF-16
 * (DOM) offsets, except the anchors read from and the locators sent to the server.
 */

const SKIPPED = new Set(["SCRIPT", "STYLE", "TEMPLATE"]);

export class TextMap {
  /** @param {Document} doc */
  constructor(doc) {
    /** @type {Text[]} */
    this.nodes = [];
    /** UTF-16 offset where each node's text starts. @type {number[]} */
    this.starts = [];
    /** @type {Map<Node, number>} */
    this.index = new Map();
    const parts = [];
    let length = 0;
    const body = doc.body;
    if (body) {
      const walker = doc.createTreeWalker(body, NodeFilter.SHOW_ELEMENT | NodeFilter.SHOW_TEXT, {
        acceptNode(node) {
          if (node.nodeType === Node.ELEMENT_NODE) {
            return SKIPPED.has(node.nodeName.toUpperCase()) ? NodeFilter.FILTER_REJECT : NodeFilter.FILTER_SKIP;
          }
          return NodeFilter.FILTER_ACCEPT;
        },
      });
      for (let node = walker.nextNode(); node; node = walker.nextNode()) {
        const text = /** @type {Text} */ (node);
        if (text.data.length === 0) continue;
        this.index.set(text, this.nodes.length);
        this.nodes.push(text);
        this.starts.push(length);
        parts.push(text.data);
        length += text.data.length;
      }
    }
    /** The whole text. */
    this.text = parts.join("");
    /** UTF-16 offsets of the first unit of every surrogate pair (astral character). */
    this.astral = [];
    for (let i = 0; i < this.text.length; i++) {
      const unit = this.text.charCodeAt(i);
      if (unit >= 0xd800 && unit <= 0xdbff && i + 1 < this.text.length) {
        const next = this.text.charCodeAt(i + 1);
        if (next >= 0xdc00 && next <= 0xdfff) {
          this.astral.push(i);
          i++;
        }
      }
    }
  }

  /** The text's length in code points (what the server calls its length). */
  get codePointLength() {
    return this.text.length - this.astral.length;
  }

  /** UTF-16 offset of code-point offset `cp`. */
  toUtf16(cp) {
    // Astral character k sits at code point astral[k] - k; count those before `cp`.
    let low = 0;
    let high = this.astral.length;
    while (low < high) {
      const mid = (low + high) >> 1;
      if (this.astral[mid] - mid < cp) low = mid + 1;
      else high = mid;
    }
    return Math.min(cp + low, this.text.length);
  }

  /** Code-point offset of UTF-16 offset `unit` (inside a surrogate pair: the pair's start). */
  toCodePoints(unit) {
    let low = 0;
    let high = this.astral.length;
    while (low < high) {
      const mid = (low + high) >> 1;
      if (this.astral[mid] < unit) low = mid + 1;
      else high = mid;
    }
    return unit - low;
  }

  /**
   * The DOM point at UTF-16 offset `offset`. A start point at a boundary goes to the start of
   * the node beginning there; an end point to the end of the node ending there.
   * @returns {{ node: Text, offset: number } | null}
   */
  pointAt(offset, asEnd = false) {
    if (this.nodes.length === 0) return null;
    let low = 0;
    let high = this.nodes.length - 1;
    // Last node starting at or before `offset` (before, strictly, for an end point).
    while (low < high) {
      const mid = (low + high + 1) >> 1;
      const before = asEnd ? this.starts[mid] < offset : this.starts[mid] <= offset;
      if (before) low = mid;
      else high = mid - 1;
    }
    const node = this.nodes[low];
    return { node, offset: Math.max(0, Math.min(offset - this.starts[low], node.data.length)) };
  }

  /** A DOM range over UTF-16 offsets [start, end). */
  rangeOf(start, end) {
    const from = this.pointAt(start);
    const to = this.pointAt(end, true);
    if (!from || !to) return null;
    const range = from.node.ownerDocument.createRange();
    range.setStart(from.node, from.offset);
    range.setEnd(to.node, to.offset);
    return range;
  }

  /** UTF-16 offset in the text of a DOM boundary point (a selection's start or end). */
  offsetOf(container, offset) {
    const at = this.index.get(container);
    if (at !== undefined) return this.starts[at] + Math.min(offset, this.nodes[at].data.length);
    // An element boundary (or text we skip): count the text of every node before the point.
    const point = container.ownerDocument.createRange();
    point.setStart(container, offset);
    let low = 0;
    let high = this.nodes.length;
    while (low < high) {
      const mid = (low + high) >> 1;
      if (point.comparePoint(this.nodes[mid], 0) < 0) low = mid + 1;
      else high = mid;
    }
    return low < this.nodes.length ? this.starts[low] : this.text.length;
  }
}
