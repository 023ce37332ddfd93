import type { OpenAPIHono } from '@hono/zod-openapi';
import type { AppEnv } from '../env';
import { registerAccountRoutes } from './account-routes';
import { registerAuthRoutes } from './auth-routes';
import { frameOf, webPage } from './frame';
import { DocsPage } from './pages/docs';
import { HomePage } from './pages/home';

const PAGES = ['/', '/docs', '/signup', '/login', '/logout', '/account', '/account/*', '/convert'];

/** The web side: pages rendered here, styles and scripts from ./public as static assets. */
export function registerWeb(app: OpenAPIHono<AppEnv>) {
  for (const path of PAGES) app.use(path, webPage);
  app.get('/', (c) => c.html(<HomePage frame={frameOf(c)} origin={new URL(c.req.url).origin} />));
  app.get('/docs', (c) => c.html(<DocsPage frame={frameOf(c)} />));
  registerAuthRoutes(app);
  registerAccountRoutes(app);
}
