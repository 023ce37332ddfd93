// Starts Swagger UI on /docs (a file, not an inline script, so the page's CSP can forbid inline scripts).
window.addEventListener('DOMContentLoaded', () => {
  const root = document.getElementById('swagger-ui');
  window.SwaggerUIBundle({
    url: root.dataset.url,
    domNode: root,
    deepLinking: true,
    tryItOutEnabled: false,
    persistAuthorization: false,
  });
});
