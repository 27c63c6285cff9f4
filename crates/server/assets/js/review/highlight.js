// @ts-check
/**
 * Highlights drawn over the document frame with the CSS Custom Highlight API: nothing is
 * inserted into the document's DOM (no comment text, no wrapper elements), only ranges
 * registered with the frame's highlight registry and one style sheet adopted by its document.
 */

const COLORS = {
  note: "91, 107, 122",
  revise: "214, 122, 0",
  add: "26, 127, 55",
  delete: "180, 35, 24",
  needs_review: "122, 63, 181",
  consult: "11, 92, 173",
  none: "129, 139, 152",
};

const STYLE = [
  ...Object.entries(COLORS).map(
    ([category, rgb]) =>
      `::highlight(dr-${category}) { background-color: rgba(${rgb}, 0.2); text-decoration: underline 2px rgba(${rgb}, 0.75); text-underline-offset: 3px; }`,
  ),
  "::highlight(dr-closed) { background-color: rgba(129, 139, 152, 0.12); }",
  "::highlight(dr-active) { background-color: rgba(242, 183, 5, 0.5); }",
  "::highlight(dr-pending) { background-color: rgba(11, 92, 173, 0.25); }",
].join("\n");

export class Highlighter {
  /** @param {Window & typeof globalThis} frameWindow */
  constructor(frameWindow) {
    this.window = frameWindow;
    const registry = frameWindow.CSS?.highlights;
    this.registry = registry ?? null;
    /** @type {Map<string, Range>} */
    this.ranges = new Map();
    if (!registry) return;
    const sheet = new frameWindow.CSSStyleSheet();
    sheet.replaceSync(STYLE);
    const doc = frameWindow.document;
    doc.adoptedStyleSheets = [...doc.adoptedStyleSheets, sheet];
  }

  /** Whether this browser can draw highlights. */
  get supported() {
    return this.registry !== null;
  }

  /**
   * Draws every item's range in its category's colour (resolved ones greyed).
   * @param {Array<{ id: string, category: string, closed: boolean, range: Range }>} items
   */
  draw(items) {
    if (!this.registry) return;
    for (const name of [...this.registry.keys()]) {
      if (name.startsWith("dr-") && name !== "dr-active" && name !== "dr-pending") this.registry.delete(name);
    }
    this.ranges.clear();
    /** @type {Map<string, Range[]>} */
    const byName = new Map();
    for (const item of items) {
      this.ranges.set(item.id, item.range);
      const name = item.closed ? "dr-closed" : `dr-${item.category in COLORS ? item.category : "none"}`;
      const list = byName.get(name) ?? [];
      list.push(item.range);
      byName.set(name, list);
    }
    for (const [name, ranges] of byName) {
      const highlight = new this.window.Highlight(...ranges);
      highlight.priority = name === "dr-closed" ? 0 : 1;
      this.registry.set(name, highlight);
    }
    this.setActive(this.active ?? null);
  }

  /** Marks one item's passage as the current one. */
  setActive(id) {
    this.active = id;
    if (!this.registry) return;
    const range = id ? this.ranges.get(id) : undefined;
    if (range) {
      const highlight = new this.window.Highlight(range);
      highlight.priority = 10;
      this.registry.set("dr-active", highlight);
    } else {
      this.registry.delete("dr-active");
    }
  }

  /** Marks the passage being commented on (while the composer is open). */
  setPending(range) {
    if (!this.registry) return;
    if (range) {
      const highlight = new this.window.Highlight(range);
      highlight.priority = 5;
      this.registry.set("dr-pending", highlight);
    } else {
      this.registry.delete("dr-pending");
    }
  }
}
