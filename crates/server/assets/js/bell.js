// @ts-check
/**
 * The navigation's unread count, live. One tab of the browser holds the person's events stream
 * (`GET /api/me/events`) and tells the others over a BroadcastChannel: a browser keeps six
 * connections to a host, and each open review screen already holds its own stream. The tab
 * that holds the stream holds a Web Lock; when it closes, the next tab waiting for the lock
 * takes over. A tab that opens asks the holder for the count it last heard.
 */

const shown = document.getElementById("unread-count");
const number = document.getElementById("unread-number");
const channel = new BroadcastChannel("docreview-unread");
/** @type {number | null} */
let last = null;

/** @param {number} count */
function show(count) {
  last = count;
  if (!shown || !number) return;
  shown.hidden = count === 0;
  number.textContent = count > 99 ? "99+" : String(count);
  document.dispatchEvent(new CustomEvent("unread-count", { detail: { count } }));
}

channel.addEventListener("message", (event) => {
  const message = event.data;
  if (message?.count !== undefined) show(Number(message.count));
  else if (message?.ask && holding && last !== null) channel.postMessage({ count: last });
});

let holding = false;

/** Holds the events stream until the page goes away (the lock is let go with it). */
async function holdStream() {
  holding = true;
  const source = new EventSource("/api/me/events");
  source.addEventListener("notification", (event) => {
    const count = Number(JSON.parse(/** @type {MessageEvent} */ (event).data).unreadCount);
    show(count);
    channel.postMessage({ count });
  });
  await new Promise((resolve) => window.addEventListener("pagehide", resolve, { once: true }));
  source.close();
  holding = false;
}

/** Waits for the stream's lock (or holds the stream at once, without Web Locks). */
function follow() {
  if (navigator.locks) {
    navigator.locks.request("docreview-unread", holdStream);
    channel.postMessage({ ask: true });
  } else {
    holdStream();
  }
}

if (shown) {
  follow();
  // A page kept in the back/forward cache let go of the stream (or its place in line) when it
  // was left: it takes it up again when it is shown.
  window.addEventListener("pageshow", (event) => {
    if (event.persisted && !holding) follow();
  });
}
