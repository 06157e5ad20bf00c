import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Hono } from 'hono';
import type { ServerEnv } from '../server-env.ts';
import { fileAt, send, staticFiles } from '../static-files.ts';

/** Where `npm run build:web` writes the web app. */
export const WEB_DIST = fileURLToPath(new URL('../../../web/dist', import.meta.url));

/** Vite names what it puts in `assets/` after the content's hash: a new build makes new names. */
const hashed = (path: string) => path.startsWith('/assets/');

/**
 * The web app's static files, compressed and cached as `staticFiles` says, and its `index.html` for any
 * other page path (the app routes in the browser). A missing asset is a 404, not the page: a browser
 * holding an old page must not get HTML for a script. Without a built app, `/` says how to build it; the
 * API works either way.
 */
export function webAppRoutes(root = WEB_DIST): Hono<ServerEnv> {
  const routes = new Hono<ServerEnv>();
  const index = join(root, 'index.html');
  if (!existsSync(index)) {
    routes.get('/', (c) =>
      c.text('Cadre is running. The web app is not built: run "npm run build:web", then reload.\n'),
    );
    return routes;
  }
  routes.use('*', staticFiles(root, { hashed }));
  routes.get('/assets/*', (c) => c.notFound());
  routes.get('*', (c) => {
    // Looked up on each request: a rebuild swaps the whole folder in.
    const page = fileAt(index);
    return page ? send(c, page, false) : c.notFound();
  });
  return routes;
}
