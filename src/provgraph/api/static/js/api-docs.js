// The interactive API page (/api/v1/docs): Swagger UI, served from /static/vendor like every asset here.
// No validator badge: that would send the description to another site.

/* global SwaggerUIBundle */
window.SwaggerUIBundle({
  url: "/api/v1/openapi.json",
  dom_id: "#swagger-ui",
  validatorUrl: null,
  deepLinking: true,
  layout: "BaseLayout",
});
