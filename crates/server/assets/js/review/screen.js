// @ts-check
/**
 * The review screen: the document frame (highlights, links, selection), the comments beside it
 * (aligned with their passages, current comment in sync both ways), the composer, live updates
 * from the events stream, keyboard shortcuts, and the drawer on narrow screens.
 *
 * The server renders every comment (askama); after a write or a live change only the threads
 * that changed come back and are put in place (`panel.js`). These modules only do what needs
 * the browser: reading the frame's DOM, drawing, and keeping what the person typed. Each has one
 * job: `page.js` (the elements and shared state), `frame.js`, `threads.js` (highlights, layout,
 * the current thread), `cards.js` (the panel's cards and filters), `composer.js`, `updates.js`
 * (after every update), `live.js` (changes made elsewhere) and `keys.js`. This one starts them.
 */

import { narrow, wireDrawer } from "./page.js";
import { watchFrame, whenFrameReady } from "./frame.js";
import { activate, scheduleLayout } from "./threads.js";
import { wireCards } from "./cards.js";
import { positionComposer, restoreUnsentComment, wireComposer } from "./composer.js";
import { wireUpdates } from "./updates.js";
import { followLive } from "./live.js";
import { wireKeys } from "./keys.js";

wireCards();
wireUpdates();
wireComposer();
wireKeys();
wireDrawer();
narrow.addEventListener("change", scheduleLayout);
window.addEventListener("resize", () => {
  scheduleLayout();
  positionComposer();
});

watchFrame();
followLive();

// A link to one thread (`#thread-<id>`, as search results give) opens it at its passage.
const linked = location.hash.startsWith("#thread-") ? decodeURIComponent(location.hash.slice(8)) : "";
if (linked) {
  whenFrameReady(() => {
    if (document.getElementById(`thread-${linked}`)) activate(linked);
  });
}
restoreUnsentComment();
