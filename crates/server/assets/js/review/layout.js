// @ts-check
/**
 * Places comment cards beside their passages on wide screens: each card at its passage's
 * height, pushed down so none overlap; the current card exactly at its passage, the cards
 * above it pushed up to make room.
 */

const GAP = 8;

/**
 * @param {HTMLElement} container the positioned element holding the cards
 * @param {Array<{ element: HTMLElement, top: number }>} cards in document order; `top` relative to the container
 * @param {number} activeIndex the current card, or -1
 */
export function placeCards(container, cards, activeIndex) {
  const heights = cards.map((card) => card.element.offsetHeight);
  const tops = cards.map((card) => Math.max(0, card.top));
  const placed = tops.slice();
  const from = activeIndex >= 0 ? activeIndex : 0;
  for (let i = from + 1; i < cards.length; i++) {
    placed[i] = Math.max(tops[i], placed[i - 1] + heights[i - 1] + GAP);
  }
  for (let i = from - 1; i >= 0; i--) {
    placed[i] = Math.min(tops[i], placed[i + 1] - heights[i] - GAP);
  }
  // Nothing may rise above the container: shift everything down if it did.
  const overshoot = cards.length > 0 ? Math.min(0, placed[0]) : 0;
  let bottom = 0;
  cards.forEach((card, i) => {
    const y = placed[i] - overshoot;
    card.element.style.transform = `translateY(${Math.round(y)}px)`;
    bottom = Math.max(bottom, y + heights[i]);
  });
  container.style.height = `${Math.ceil(bottom)}px`;
}

/** Undoes `placeCards` (narrow screens show a plain list). */
export function unplaceCards(container, cards) {
  for (const card of cards) card.element.style.transform = "";
  container.style.height = "";
}
