import { SystemError } from '../../core/errors.ts';
import { type ApiName, type Env, endpoint } from './endpoints.ts';
import type { HttpClient, HttpRequest, HttpResponse } from './http-client.ts';
import { bodyText } from './http-client.ts';
import { BlockedUrlError, HttpStatusError, ResponseRefusedError } from './http-errors.ts';

/** What every network tool is built from; tests pass fixture endpoints in `env` and a fresh client. */
export interface NetworkToolDeps {
  http: HttpClient;
  env: Env;
  /** Cache lifetime in seconds for a tool's responses (settings `cacheTtl`, else the tool's default). */
  cacheTtl(tool: string): number;
}

/** Shown to the model with every tool result: where it came from and whether it was cached. */
export interface ResultMeta {
  cached: boolean;
  fetchedAt: string;
}

/** Cache metadata for one or more responses: cached only when every one of them was. */
export function metaOf(...responses: HttpResponse[]): ResultMeta {
  return {
    cached: responses.length > 0 && responses.every((response) => response.cache === 'hit'),
    fetchedAt: new Date(Math.min(...responses.map((response) => response.fetchedAt))).toISOString(),
  };
}

/** A failure the model should read and act on: one line, no stack. */
export class ToolCallError extends SystemError {
  constructor(message: string, details: Record<string, unknown> = {}) {
    super('tool_call_failed', message, details);
    this.name = 'ToolCallError';
  }
}

/**
 * Turns any failure of a call to `api` into a short message saying what happened and what to do next.
 * `notFound` is the tool's own wording for a 404.
 */
export function apiFailure(api: string, error: unknown, notFound?: string): ToolCallError {
  if (error instanceof ToolCallError) return error;
  if (BlockedUrlError.is(error)) return new ToolCallError(error.message);
  if (HttpStatusError.is(error)) {
    const { status } = error;
    if (status === 404) return new ToolCallError(notFound ?? `${api}: not found (HTTP 404).`);
    if (status === 429) {
      const wait = error.retryAfterMs === undefined ? '' : ` for ${Math.ceil(error.retryAfterMs / 1000)} s`;
      return new ToolCallError(
        `${api} is rate-limiting requests (HTTP 429)${wait}; use another source or try later.`,
      );
    }
    if (status === 401 || status === 403) {
      return new ToolCallError(
        `${api} refused the request (HTTP ${status}); the API key may be missing or invalid.`,
      );
    }
    if (status >= 500)
      return new ToolCallError(`${api} is failing (HTTP ${status}); try again later or use another source.`);
    const detail = error.bodySnippet.replace(/\s+/g, ' ').trim().slice(0, 160);
    return new ToolCallError(`${api} rejected the request (HTTP ${status})${detail ? `: ${detail}` : ''}.`);
  }
  if (ResponseRefusedError.is(error)) return new ToolCallError(`${api}: ${error.message}`);
  if (error instanceof SyntaxError)
    return new ToolCallError(`${api} sent a malformed response; try again or use another source.`);
  if (error instanceof Error && error.name === 'ZodError') {
    return new ToolCallError(
      `${api} sent a response in an unexpected shape; try again or use another source.`,
    );
  }
  if (error instanceof Error && error.name === 'AbortError') throw error;
  return new ToolCallError(`${api} call failed: ${error instanceof Error ? error.message : String(error)}`);
}

/** Runs `work`, converting every failure into an `apiFailure`. */
export async function callApi<T>(api: string, work: () => Promise<T>, notFound?: string): Promise<T> {
  try {
    return await work();
  } catch (error) {
    throw apiFailure(api, error, notFound);
  }
}

/**
 * Fetches a JSON document from a trusted endpoint, cached under the tool's TTL: the one JSON fetch of the
 * network tools. A GET unless `options` say otherwise (method, body, headers); `options.accept` narrows
 * the content types taken (the default also takes SPARQL results and JSONP-typed JSON).
 */
export async function fetchJson<T = unknown>(
  deps: NetworkToolDeps,
  tool: string,
  url: string,
  options: Partial<HttpRequest> = {},
): Promise<{ json: T; response: HttpResponse }> {
  const response = await deps.http.request({
    url,
    trust: 'endpoint',
    accept: [
      'application/json',
      'application/sparql-results+json',
      'text/javascript',
      'application/x-javascript',
    ],
    cache: { namespace: tool, ttlSeconds: deps.cacheTtl(tool) },
    ...options,
  });
  return { json: JSON.parse(bodyText(response)) as T, response };
}

/** Base URL helper re-exported for tool files. */
export function apiBase(deps: NetworkToolDeps, api: ApiName): string {
  return endpoint(deps.env, api);
}

/** Adds query parameters to a URL, skipping undefined values. */
export function withQuery(base: string, params: Record<string, string | number | undefined>): string {
  const url = new URL(base);
  for (const [key, value] of Object.entries(params)) {
    if (value !== undefined) url.searchParams.set(key, String(value));
  }
  return url.toString();
}

/** Text with tags stripped and entities decoded, for snippets that APIs return as HTML. */
export function plainText(html: string): string {
  return decodeEntities(html.replace(/<[^>]*>/g, ''))
    .replace(/\s+/g, ' ')
    .trim();
}

const NAMED_ENTITIES: Record<string, string> = {
  amp: '&',
  lt: '<',
  gt: '>',
  quot: '"',
  apos: "'",
  nbsp: ' ',
};

export function decodeEntities(text: string): string {
  return text.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (match, entity: string) => {
    if (entity[0] === '#') {
      const code =
        entity[1] === 'x' || entity[1] === 'X'
          ? Number.parseInt(entity.slice(2), 16)
          : Number(entity.slice(1));
      return Number.isFinite(code) && code > 0 && code < 0x110000 ? String.fromCodePoint(code) : match;
    }
    return NAMED_ENTITIES[entity.toLowerCase()] ?? match;
  });
}

/** Shortens text to `max` characters at a word boundary, with an ellipsis. */
export function clip(text: string, max: number): string {
  if (text.length <= max) return text;
  const cut = text.slice(0, max);
  const space = cut.lastIndexOf(' ');
  return `${(space > max * 0.6 ? cut.slice(0, space) : cut).trimEnd()}…`;
}
