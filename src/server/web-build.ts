import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { WEB_DIST } from './routes/web-app.ts';

const WEB_CONFIG = fileURLToPath(new URL('../../web/vite.config.ts', import.meta.url));
/** What the built app is made from: a change to any of these makes a built app out of date. */
const WEB_SOURCES = [
  fileURLToPath(new URL('../../web/', import.meta.url)),
  fileURLToPath(new URL('../app/answer/protocol.ts', import.meta.url)),
];

/** The newest modification time among the web app's sources (its built files excluded), in ms. */
function newestSource(paths = WEB_SOURCES, skip = 'dist'): number {
  let newest = 0;
  for (const path of paths) {
    if (!existsSync(path)) continue;
    const stat = statSync(path);
    if (!stat.isDirectory()) {
      newest = Math.max(newest, stat.mtimeMs);
      continue;
    }
    for (const entry of readdirSync(path, { withFileTypes: true })) {
      if (entry.name === skip || entry.name === 'node_modules' || entry.name.startsWith('.')) continue;
      newest = Math.max(newest, newestSource([join(path, entry.name)], skip));
    }
  }
  return newest;
}

/** Where this package's Vite command is, or undefined when Vite is not installed (a production install). */
function viteCommand(): string | undefined {
  try {
    const manifest = createRequire(import.meta.url).resolve('vite/package.json');
    const bin = (JSON.parse(readFileSync(manifest, 'utf8')) as { bin?: { vite?: string } }).bin?.vite;
    return bin ? join(dirname(manifest), bin) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Builds the web app into `root` when it is missing, so `cadre serve` shows the page on a clone whose
 * install skipped npm's scripts (`npm install --ignore-scripts`, or a `prepare` that failed): a person
 * never has to remember a build command. `npm install` normally builds it already (the `prepare` script).
 * Reports on `report` (stderr: stdout's first line belongs to "Cadre listening on"). Returns whether the
 * app is there afterwards; the API works either way.
 */
export function ensureWebApp(report: (line: string) => void, root = WEB_DIST): boolean {
  const index = join(root, 'index.html');
  const built = existsSync(index);
  // A checkout updated without `npm install` (which rebuilds) would otherwise serve yesterday's page.
  const stale = built && statSync(index).mtimeMs < newestSource();
  if (built && !stale) return true;
  const vite = viteCommand();
  if (!vite || !existsSync(WEB_CONFIG)) {
    // Without Vite (a production install) an older build is still the best page there is.
    if (built) return true;
    report(
      'The web app is not built and cannot be built here (Vite is not installed): the API works without it.',
    );
    return false;
  }
  report(
    stale
      ? 'The web app is older than its sources: rebuilding it…'
      : 'Building the web app (once; `npm run build:web` rebuilds it)…',
  );
  // Built beside the served folder and swapped in whole, so a page being served (or another process
  // building at the same time) never sees half a build.
  const parent = join(root, '..');
  const staging = mkdtempSync(join(parent, '.web-build-'));
  const result = spawnSync(
    process.execPath,
    [vite, 'build', '--config', WEB_CONFIG, '--outDir', staging, '--emptyOutDir', '--logLevel', 'warn'],
    // A production build whatever the caller's NODE_ENV (a test runner sets "test", which makes React's
    // development build: larger than the first-load budget the build checks).
    { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NODE_ENV: 'production' } },
  );
  if (result.status !== 0 || !existsSync(join(staging, 'index.html'))) {
    rmSync(staging, { recursive: true, force: true });
    report(
      `Building the web app failed; ${built ? 'serving the older build' : 'the API works without it'}. Vite said:\n${result.stderr || result.stdout}`,
    );
    return built;
  }
  swapIn(staging, root);
  return existsSync(index);
}

/** Replaces `root` with `staging`; when another process swapped its own build in first, keeps that one. */
function swapIn(staging: string, root: string): void {
  const old = `${staging}-old`;
  try {
    if (existsSync(root)) renameSync(root, old);
    renameSync(staging, root);
  } catch {
    // Another build won the race: its files are as new as ours.
  } finally {
    rmSync(staging, { recursive: true, force: true });
    rmSync(old, { recursive: true, force: true });
  }
}
