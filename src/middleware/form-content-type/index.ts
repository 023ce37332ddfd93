import { createMiddleware } from 'hono/factory';

/**
 * Reduces a multipart Content-Type to `multipart/form-data; boundary=...`. Clients may add
 * parameters (charset) or spacing that the OpenAPI validator's media-type check refuses,
 * although they are valid (RFC 7578); only the boundary matters for parsing.
 */
export const formContentType = createMiddleware(async (c, next) => {
  const contentType = c.req.header('Content-Type');
  if (contentType && /^\s*multipart\/form-data\s*;/i.test(contentType)) {
    const boundary = /;\s*boundary\s*=\s*("[^"]*"|[^;\s]+)/i.exec(contentType)?.[1];
    const normalised = boundary ? `multipart/form-data; boundary=${boundary}` : 'multipart/form-data';
    if (normalised !== contentType) {
      const headers = new Headers(c.req.raw.headers);
      headers.set('Content-Type', normalised);
      c.req.raw = new Request(c.req.raw, { headers });
    }
  }
  await next();
});
