import { existsSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { serveStatic } from '@hono/node-server/serve-static';
import { Hono } from 'hono';
import type { ServerEnv } from '../server-env.ts';

/** Where `npm run build:web` writes the web app. */
export const WEB_DIST = fileURLToPath(new URL('../../../web/dist', import.meta.url));

/**
 * The web app's static files, and its `index.html` for any other page path (the app routes in the
 * browser). Without a built app, `/` says how to build it; the API works either way.
 */
export function webAppRoutes(root = WEB_DIST): Hono<ServerEnv> {
  const routes = new Hono<ServerEnv>();
  const built = existsSync(join(root, 'index.html'));
  if (!built) {
    routes.get('/', (c) =>
      c.text('Cadre is running. The web app is not built: run "npm run build:web", then reload.\n'),
    );
    return routes;
  }
  // serveStatic resolves `root` against the working directory, so hand it a relative path.
  const relativeRoot = relative(process.cwd(), root) || '.';
  routes.use('*', serveStatic({ root: relativeRoot }));
  routes.get('*', serveStatic({ root: relativeRoot, rewriteRequestPath: () => '/index.html' }));
  return routes;
}
