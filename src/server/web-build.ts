import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { WEB_DIST } from './routes/web-app.ts';

const WEB_CONFIG = fileURLToPath(new URL('../../web/vite.config.ts', import.meta.url));

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
  if (existsSync(join(root, 'index.html'))) return true;
  const vite = viteCommand();
  if (!vite || !existsSync(WEB_CONFIG)) {
    report(
      'The web app is not built and cannot be built here (Vite is not installed): the API works without it.',
    );
    return false;
  }
  report('Building the web app (once; `npm run build:web` rebuilds it)…');
  const result = spawnSync(
    process.execPath,
    [vite, 'build', '--config', WEB_CONFIG, '--outDir', root, '--emptyOutDir', '--logLevel', 'warn'],
    { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] },
  );
  if (result.status !== 0 || !existsSync(join(root, 'index.html'))) {
    report(
      `Building the web app failed; the API works without it. Vite said:\n${result.stderr || result.stdout}`,
    );
    return false;
  }
  return true;
}
