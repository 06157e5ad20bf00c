import { SystemError } from '../core/errors.ts';

/** What Cadre reads of a model server's answer before the provider SDK does. */
export interface ModelFetchLimits {
  /** Bytes of an error response's body kept; the rest is not read and the connection is closed. */
  maxErrorBodyBytes: number;
}

export const DEFAULT_MODEL_FETCH_LIMITS: ModelFetchLimits = { maxErrorBodyBytes: 64 * 1024 };

/**
 * The `fetch` every provider gets. Provider SDKs read an error response's body whole (a misbehaving
 * gateway sent 700 MB, which took 2.36 GB of memory) and take any 200 answer for a model's, so a proxy's
 * HTML sign-in page became "stream ended without a finish reason". Here an error body is read only up to
 * `maxErrorBodyBytes`, and a 200 answer that is an HTML page is an error that says what came back.
 */
export function guardedModelFetch(
  base: typeof fetch = globalThis.fetch,
  limits: ModelFetchLimits = DEFAULT_MODEL_FETCH_LIMITS,
): typeof fetch {
  return async (input, init) => {
    const response = await base(input, init);
    if (!response.ok) return withBoundedBody(response, limits.maxErrorBodyBytes);
    const type = response.headers.get('content-type') ?? '';
    if (/^\s*text\/html\b/i.test(type)) {
      const host = hostOf(input);
      const page = new TextDecoder().decode(await readAtMost(response, 16 * 1024));
      const title = /<title[^>]*>([^<]{1,200})/i.exec(page)?.[1]?.replace(/\s+/g, ' ').trim();
      throw new SystemError(
        'provider_not_a_model',
        `${host} answered HTTP ${response.status} with an HTML page (text/html) instead of a model response` +
          `${title ? `: "${title}"` : ''}. Check that the base URL points at the model API (often ending in /v1), ` +
          'not at a web page or a proxy sign-in.',
        { host, status: response.status, contentType: type },
      );
    }
    return response;
  };
}

/** A copy of `response` whose body is at most `maxBytes` of the original (the rest is never read). */
async function withBoundedBody(response: Response, maxBytes: number): Promise<Response> {
  const { bytes, cut } = await readAtMostWithFlag(response, maxBytes);
  const headers = new Headers(response.headers);
  headers.delete('content-length');
  headers.delete('content-encoding');
  const body = cut
    ? new Blob([bytes, `… [error body cut at ${Math.round(maxBytes / 1024)} KB]`])
    : new Blob([bytes]);
  return new Response(body, { status: response.status, statusText: response.statusText, headers });
}

async function readAtMost(response: Response, maxBytes: number): Promise<Uint8Array<ArrayBuffer>> {
  return (await readAtMostWithFlag(response, maxBytes)).bytes;
}

/** Reads up to `maxBytes` of the body, then cancels the rest (which closes the connection). */
async function readAtMostWithFlag(
  response: Response,
  maxBytes: number,
): Promise<{ bytes: Uint8Array<ArrayBuffer>; cut: boolean }> {
  const reader = response.body?.getReader();
  if (!reader) return { bytes: new Uint8Array(0), cut: false };
  const chunks: Uint8Array[] = [];
  let total = 0;
  let cut = false;
  try {
    while (total < maxBytes) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value.subarray(0, maxBytes - total));
      total += Math.min(value.length, maxBytes - total);
      if (total >= maxBytes) cut = true;
    }
  } finally {
    if (cut) await reader.cancel().catch(() => undefined);
    else reader.releaseLock();
  }
  const bytes = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.length;
  }
  return { bytes, cut };
}

function hostOf(input: Parameters<typeof fetch>[0]): string {
  try {
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    return new URL(url).host;
  } catch {
    return 'the model server';
  }
}
