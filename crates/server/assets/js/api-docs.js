// Starts the vendored Swagger UI on the contract this server serves (`/api/docs`).

const root = /** @type {HTMLElement} */ (document.getElementById("swagger-ui"));
// The classic bundle (loaded with `defer`, so before this module runs) sets a global.
const SwaggerUIBundle = /** @type {any} */ (window).SwaggerUIBundle;
SwaggerUIBundle({
  url: root.dataset.url,
  domNode: root,
  deepLinking: true,
  // "Try it out" sends the page's cookies: a signed-in person can call the API as themselves.
  withCredentials: true,
});
