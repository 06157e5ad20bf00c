import { createReadStream, type Stats, statSync } from 'node:fs';
import { join, sep } from 'node:path';
import { Readable } from 'node:stream';
import type { Context, MiddlewareHandler } from 'hono';
import { accepts } from 'hono/accepts';
import { getMimeType } from 'hono/utils/mime';

/** Encodings a build may hold beside a file (`app.js.br`, `app.js.gz`), best first. */
const ENCODINGS = [
  { name: 'br', suffix: '.br' },
  { name: 'gzip', suffix: '.gz' },
] as const;

/** Text worth compressing; images and fonts are compressed already. */
const COMPRESSIBLE = /^(?:text\/|application\/(?:javascript|json|xml|wasm)|image\/svg\+xml)/;

/** A year: the longest a cache keeps anything, for files whose name changes with their content. */
export const IMMUTABLE = 'public, max-age=31536000, immutable';

export interface StaticFilesOptions {
  /** Whether a path's name carries its content hash (Vite's `/assets/`): cached a year, never revalidated. */
  hashed: (path: string) => boolean;
}

/**
 * Serves the files under `root` as a browser wants them: the `.br` or `.gz` the build made beside a file
 * when the request accepts that encoding (brotli first; `q=0` refuses one), with `Vary: Accept-Encoding`;
 * hashed files cached for a year as immutable, every other file (index.html) revalidated on each visit,
 * so a new build is seen at once. A path outside `root` or with dot segments is not served.
 */
export function staticFiles(root: string, options: StaticFilesOptions): MiddlewareHandler {
  return async (c, next) => {
    if (c.req.method !== 'GET' && c.req.method !== 'HEAD') return next();
    const path = safePath(c.req.path);
    const file = path === undefined ? undefined : fileAt(join(root, path));
    if (!path || !file) return next();
    return send(c, file, options.hashed(path));
  };
}

/** Sends `file` (a path to a regular file) with the encoding, type and cache headers it deserves. */
export function send(c: Context, file: { path: string; stats: Stats }, hashed: boolean): Response {
  const type = getMimeType(file.path) ?? 'application/octet-stream';
  const headers: Record<string, string> = {
    'content-type': type,
    'cache-control': hashed ? IMMUTABLE : 'no-cache',
  };
  let chosen = file;
  if (COMPRESSIBLE.test(type)) {
    headers.vary = 'Accept-Encoding';
    const encoding = acceptedEncoding(c);
    const suffix = ENCODINGS.find((one) => one.name === encoding)?.suffix;
    const encoded = suffix ? fileAt(file.path + suffix) : undefined;
    if (encoded) {
      chosen = encoded;
      headers['content-encoding'] = encoding;
    }
  }
  headers['content-length'] = String(chosen.stats.size);
  headers['last-modified'] = file.stats.mtime.toUTCString();
  if (c.req.method === 'HEAD') return c.body(null, 200, headers);
  const body = Readable.toWeb(createReadStream(chosen.path)) as ReadableStream<Uint8Array>;
  return c.body(body, 200, headers);
}

/** The best encoding the request accepts among those a build makes, or `identity`. */
function acceptedEncoding(c: Context): string {
  return accepts(c, {
    header: 'Accept-Encoding',
    supports: ENCODINGS.map((one) => one.name),
    default: 'identity',
    // Equal weights (the usual `gzip, deflate, br, zstd`) go to the smaller encoding, not the first named.
    match: (accepted, config) => {
      const weight = (name: string) =>
        accepted.find((one) => one.type.toLowerCase() === name)?.q ??
        accepted.find((one) => one.type === '*')?.q ??
        0;
      let best = config.default;
      let bestWeight = 0;
      for (const name of config.supports) {
        if (weight(name) > bestWeight) {
          best = name;
          bestWeight = weight(name);
        }
      }
      return best;
    },
  });
}

/** The request path when it names a file under the root: no dot segments, backslashes or empty parts. */
function safePath(requestPath: string): string | undefined {
  let path: string;
  try {
    path = decodeURIComponent(requestPath);
  } catch {
    return undefined;
  }
  if (/(?:^|[/\\])\.{1,2}(?:$|[/\\])|[/\\]{2,}|\\|\0/.test(path)) return undefined;
  return path.split('/').join(sep);
}

/** The regular file at `path` with its stats, or undefined. */
export function fileAt(path: string): { path: string; stats: Stats } | undefined {
  const stats = statSync(path, { throwIfNoEntry: false });
  return stats?.isFile() ? { path, stats } : undefined;
}
