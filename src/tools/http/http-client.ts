import { createHash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { LookupFunction } from 'node:net';
import { abortableSleep } from '../../core/abortable-sleep.ts';
import type { HttpCacheStore } from '../../core/http-cache.ts';
import { ACCEPT_ENCODING, readBody } from './body-reader.ts';
import { BlockedUrlError, HttpStatusError, ResponseRefusedError, redact } from './http-errors.ts';
import type { RateLimiter } from './rate-limiter.ts';
import {
  backoffDelay,
  DEFAULT_RETRY_POLICY,
  isRetryableStatus,
  parseRetryAfter,
  type RetryPolicy,
} from './retry-policy.ts';
import { type CheckedTarget, checkUrl, type GuardOptions, systemResolver } from './url-guard.ts';
import { USER_AGENT } from './user-agent.ts';

/**
 * The one HTTP client every web and knowledge tool uses.
 *
 * 1. Serve from the cache when the request is cacheable and a fresh entry exists.
 * 2. For each hop (at most `maxRedirects` redirects, followed by hand): guard the URL unless it is on a
 *    trusted endpoint's origin, wait for the host's rate limit, connect to the checked address only.
 * 3. Check the content type before reading; read the body with the size cap after decompression.
 * 4. Retry 429/5xx and network failures with backoff, honouring `Retry-After` up to a cap.
 * 5. Store successful responses in the cache with the caller's TTL; at most once an interval (an hour by
 *    default), remove the expired ones, so the cache of a long-running server does not only grow.
 * The whole request, retries included, runs under one time cap.
 */
export interface HttpRequest {
  url: string | URL;
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: string;
  /**
   * `endpoint`: a configured API base URL, trusted even on a private address (`CADRE_ENDPOINT_*`);
   * `guarded`: a URL from a model or from content, checked at every hop.
   */
  trust: 'endpoint' | 'guarded';
  /** Accepted content types (`text/html`, `application/json`, `text/*`); omitted accepts any. */
  accept?: readonly string[];
  maxBytes?: number;
  timeoutMs?: number;
  signal?: AbortSignal;
  /** Caches a successful response under `namespace` (the tool name) for `ttlSeconds`; 0 disables. */
  cache?: { namespace: string; ttlSeconds: number };
}

export interface HttpResponse {
  /** Final URL after redirects. */
  url: string;
  status: number;
  contentType: string;
  body: Buffer;
  /** `hit`: served from the store without touching the network. */
  cache: 'hit' | 'miss' | 'off';
  /** When the body was fetched from the network (epoch ms). */
  fetchedAt: number;
  redirects: number;
}

export interface HttpClientOptions {
  guard?: Partial<GuardOptions>;
  rateLimiter?: RateLimiter;
  cache?: HttpCacheStore;
  /** Least time between two removals of expired cache entries, in ms (default an hour); 0 never removes. */
  cachePruneIntervalMs?: number;
  retry?: Partial<RetryPolicy>;
  maxRedirects?: number;
  defaultTimeoutMs?: number;
  defaultMaxBytes?: number;
  userAgent?: string;
  now?: () => number;
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  random?: () => number;
  /** Called once per connection attempt, with the address connected to (for tests and traces). */
  onConnect?: (target: { url: string; address: string }) => void;
}

const DEFAULT_MAX_BYTES = 5 * 1024 * 1024;
const DEFAULT_TIMEOUT_MS = 20_000;
const CACHE_PRUNE_INTERVAL_MS = 3_600_000;

export class HttpClient {
  readonly options: HttpClientOptions;
  #guard: GuardOptions;
  #retry: RetryPolicy;
  #now: () => number;
  #sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  #random: () => number;
  /** When expired entries were last removed; the first store after start-up removes them. */
  #prunedAt: number | undefined;

  constructor(options: HttpClientOptions = {}) {
    this.options = options;
    this.#guard = {
      resolve: options.guard?.resolve ?? systemResolver,
      allowHosts: options.guard?.allowHosts ?? new Set(),
      ...(options.guard?.isAllowedAddress ? { isAllowedAddress: options.guard.isAllowedAddress } : {}),
    };
    this.#retry = { ...DEFAULT_RETRY_POLICY, ...options.retry };
    this.#now = options.now ?? Date.now;
    this.#sleep = options.sleep ?? abortableSleep;
    this.#random = options.random ?? Math.random;
  }

  /** Sends a request; throws `BlockedUrlError`, `HttpStatusError` or `ResponseRefusedError` on failure. */
  async request(request: HttpRequest): Promise<HttpResponse> {
    const cacheKey = request.cache && request.cache.ttlSeconds > 0 ? keyOf(request) : undefined;
    if (cacheKey && this.options.cache) {
      // A guarded URL is checked even when cached, so a host refused now is refused from the cache too.
      if (request.trust === 'guarded') await checkUrl(parseUrl(String(request.url)), this.#guard);
      const hit = await this.options.cache.get(cacheKey, this.#now());
      if (hit) {
        return {
          url: hit.url,
          status: hit.status,
          contentType: hit.contentType,
          body: Buffer.from(hit.body),
          cache: 'hit',
          fetchedAt: hit.storedAt,
          redirects: 0,
        };
      }
    }
    const timeoutMs = request.timeoutMs ?? this.options.defaultTimeoutMs ?? DEFAULT_TIMEOUT_MS;
    const timeout = AbortSignal.timeout(timeoutMs);
    const signal = request.signal ? AbortSignal.any([request.signal, timeout]) : timeout;
    let response: HttpResponse;
    try {
      response = await this.#withRetries(request, signal);
    } catch (error) {
      if (timeout.aborted && !request.signal?.aborted) {
        throw new ResponseRefusedError(
          'timeout',
          String(request.url),
          `No complete response from ${hostOf(request.url)} within ${Math.round(timeoutMs / 100) / 10} s.`,
        );
      }
      throw error;
    }
    if (cacheKey && this.options.cache && request.cache) {
      await this.options.cache.put(
        cacheKey,
        request.cache.namespace,
        {
          url: redact(response.url),
          status: response.status,
          contentType: response.contentType,
          body: response.body,
          storedAt: response.fetchedAt,
        },
        response.fetchedAt + request.cache.ttlSeconds * 1000,
      );
      await this.#pruneCache(this.options.cache);
    }
    return { ...response, cache: cacheKey && this.options.cache ? 'miss' : 'off' };
  }

  async #pruneCache(cache: HttpCacheStore): Promise<void> {
    const interval = this.options.cachePruneIntervalMs ?? CACHE_PRUNE_INTERVAL_MS;
    const now = this.#now();
    if (interval <= 0 || (this.#prunedAt !== undefined && now - this.#prunedAt < interval)) return;
    this.#prunedAt = now;
    await cache.prune(now);
  }

  async #withRetries(request: HttpRequest, signal: AbortSignal): Promise<HttpResponse> {
    for (let attempt = 0; ; attempt++) {
      let failure: unknown;
      let waitMs: number | undefined;
      try {
        return await this.#followRedirects(request, signal);
      } catch (error) {
        failure = error;
        if (signal.aborted || attempt >= this.#retry.retries) throw error;
        if (HttpStatusError.is(error)) {
          if (!isRetryableStatus(error.status)) throw error;
          if (error.retryAfterMs !== undefined) {
            if (error.retryAfterMs > this.#retry.maxRetryAfterMs) throw error;
            waitMs = error.retryAfterMs;
          }
        } else if (!(ResponseRefusedError.is(error) && error.code === 'network')) {
          throw error;
        }
      }
      await this.#sleep(waitMs ?? backoffDelay(this.#retry, attempt, this.#random()), signal).catch(() => {
        throw failure;
      });
    }
  }

  async #followRedirects(request: HttpRequest, signal: AbortSignal): Promise<HttpResponse> {
    const maxRedirects = this.options.maxRedirects ?? 5;
    let url = parseUrl(String(request.url));
    const firstOrigin = url.origin;
    const trustedOrigin = request.trust === 'endpoint' ? firstOrigin : undefined;
    let method = request.method ?? 'GET';
    let body = request.body;
    for (let hop = 0; hop <= maxRedirects; hop++) {
      const target = await this.#target(url, trustedOrigin);
      await this.options.rateLimiter?.acquire(url.host, signal);
      // The caller's headers carry API keys: they go to the origin it asked for, never to another one.
      const headers = url.origin === firstOrigin ? request.headers : sameOriginOnly(request.headers);
      const response = await this.#send(target, { ...request, method, body, headers }, signal);
      const status = response.statusCode ?? 0;
      const location = response.headers.location;
      if (status >= 300 && status < 400 && location) {
        response.destroy();
        url = parseUrl(location, url);
        if (status === 303 || ((status === 301 || status === 302) && method === 'POST')) {
          method = 'GET';
          body = undefined;
        }
        continue;
      }
      return this.#finish(url, response, request, hop);
    }
    throw new ResponseRefusedError(
      'too_many_redirects',
      String(request.url),
      `More than ${maxRedirects} redirects from ${hostOf(request.url)}; stopped.`,
    );
  }

  /** Trusted endpoints skip the guard on their own origin; every other hop is checked. */
  async #target(url: URL, trustedOrigin: string | undefined): Promise<CheckedTarget | { url: URL }> {
    if (trustedOrigin && url.origin === trustedOrigin) return { url };
    return checkUrl(url, this.#guard);
  }

  async #send(
    target: CheckedTarget | { url: URL },
    request: HttpRequest & { method: string },
    signal: AbortSignal,
  ): Promise<IncomingMessage> {
    const { url } = target;
    const pinned = 'address' in target ? target : undefined;
    this.options.onConnect?.({ url: url.toString(), address: pinned?.address ?? url.hostname });
    // Loaded with the first request: most commands fetch nothing, and node:http is ~20 ms of a start.
    const transport = url.protocol === 'https:' ? await import('node:https') : await import('node:http');
    const headers: Record<string, string> = {
      'user-agent': this.options.userAgent ?? USER_AGENT,
      'accept-encoding': ACCEPT_ENCODING,
      accept: request.accept?.length ? `${request.accept.join(', ')}, */*;q=0.1` : '*/*',
      ...lowerCaseKeys(request.headers ?? {}),
    };
    if (request.body !== undefined) headers['content-length'] = String(Buffer.byteLength(request.body));
    return new Promise((resolve, reject) => {
      const outgoing = transport.request(url, {
        method: request.method,
        headers,
        signal,
        agent: false,
        ...(pinned ? { lookup: pinnedLookup(pinned.address, pinned.family) } : {}),
      });
      outgoing.on('response', resolve);
      outgoing.on('error', (error) => {
        if (error.name === 'AbortError' || BlockedUrlError.is(error)) reject(error);
        else
          reject(
            new ResponseRefusedError(
              'network',
              url.toString(),
              `Could not reach ${url.host}: ${error.message}.`,
            ),
          );
      });
      outgoing.end(request.body);
    });
  }

  async #finish(
    url: URL,
    response: IncomingMessage,
    request: HttpRequest,
    redirects: number,
  ): Promise<HttpResponse> {
    const status = response.statusCode ?? 0;
    const contentType = String(response.headers['content-type'] ?? '').toLowerCase();
    const maxBytes = request.maxBytes ?? this.options.defaultMaxBytes ?? DEFAULT_MAX_BYTES;
    if (status < 200 || status >= 300) {
      const body = await readBody(response, url.toString(), 64 * 1024).catch(() => Buffer.alloc(0));
      throw new HttpStatusError(
        url.toString(),
        status,
        body.toString('utf8').slice(0, 300),
        parseRetryAfter(header(response, 'retry-after'), this.#now()),
      );
    }
    if (request.accept?.length && !acceptable(contentType, request.accept)) {
      response.destroy();
      throw new ResponseRefusedError(
        'content_type',
        url.toString(),
        `${hostOf(url)} sent ${contentType || 'no content type'}, not one of ${request.accept.join(', ')}.`,
      );
    }
    const body = await readBody(response, url.toString(), maxBytes);
    return {
      url: url.toString(),
      status,
      contentType,
      body,
      cache: 'off',
      fetchedAt: this.#now(),
      redirects,
    };
  }
}

/** A `lookup` that answers every name with the address the guard already checked: no second DNS query. */
export function pinnedLookup(address: string, family: 4 | 6): LookupFunction {
  return ((_hostname: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) => {
    if (options?.all) callback(null, [{ address, family }]);
    else callback(null, address, family);
  }) as LookupFunction;
}

/** Decodes a body as text using the charset the server declared (UTF-8 otherwise). */
export function bodyText(response: Pick<HttpResponse, 'body' | 'contentType'>): string {
  const charset = /charset=["']?([\w-]+)/i.exec(response.contentType)?.[1] ?? 'utf-8';
  try {
    return new TextDecoder(charset).decode(response.body);
  } catch {
    return new TextDecoder('utf-8').decode(response.body);
  }
}

/** Parses a request or redirect URL; one that does not parse is refused like any other bad target. */
function parseUrl(raw: string, base?: URL): URL {
  try {
    return new URL(raw, base);
  } catch {
    throw new BlockedUrlError(raw, 'it is not a valid absolute URL');
  }
}

function acceptable(contentType: string, accept: readonly string[]): boolean {
  const type = contentType.split(';')[0]?.trim() ?? '';
  return accept.some((pattern) =>
    pattern.endsWith('/*') ? type.startsWith(pattern.slice(0, -1)) : type === pattern,
  );
}

function keyOf(request: HttpRequest): string {
  return createHash('sha256')
    .update(
      JSON.stringify([
        request.cache?.namespace,
        request.method ?? 'GET',
        String(request.url),
        request.body ?? '',
      ]),
    )
    .digest('hex');
}

function header(response: IncomingMessage, name: string): string | undefined {
  const value = response.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** What of the caller's headers may follow a redirect to another origin: only how to read the body. */
function sameOriginOnly(headers: Record<string, string> | undefined): Record<string, string> {
  return Object.fromEntries(
    Object.entries(headers ?? {}).filter(([key]) => ['accept', 'content-type'].includes(key.toLowerCase())),
  );
}

function lowerCaseKeys(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).map(([key, value]) => [key.toLowerCase(), value]));
}

function hostOf(url: string | URL): string {
  try {
    return new URL(String(url)).host;
  } catch {
    return 'the server';
  }
}
