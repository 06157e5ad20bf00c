import { APICallError } from 'ai';
import { describe, expect, it } from 'vitest';
import { isRetryable, requestedDelayMs, withRetries } from './retry.ts';

const apiError = (statusCode: number, headers: Record<string, string> = {}) =>
  new APICallError({
    message: `status ${statusCode}`,
    url: 'http://x',
    requestBodyValues: {},
    statusCode,
    responseHeaders: headers,
  });

describe('retry policy', () => {
  it('retries 408, 409, 429 and 5xx, and never 400, 401 or 403', () => {
    for (const status of [408, 409, 429, 500, 502, 503]) expect(isRetryable(apiError(status))).toBe(true);
    for (const status of [400, 401, 403, 404, 422]) expect(isRetryable(apiError(status))).toBe(false);
    expect(
      isRetryable(Object.assign(new TypeError('fetch failed'), { cause: { code: 'ECONNREFUSED' } })),
    ).toBe(true);
  });

  it('honours Retry-After in seconds, as a date, and retry-after-ms, capped', () => {
    expect(requestedDelayMs(apiError(429, { 'retry-after': '2' }), 10_000)).toBe(2000);
    expect(requestedDelayMs(apiError(429, { 'retry-after': '120' }), 10_000)).toBe(10_000);
    expect(requestedDelayMs(apiError(429, { 'retry-after-ms': '150' }), 10_000)).toBe(150);
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(
      requestedDelayMs(apiError(503, { 'Retry-After': 'Thu, 01 Jan 2026 00:00:03 GMT' }), 10_000, now),
    ).toBe(3000);
    expect(requestedDelayMs(apiError(503), 10_000)).toBeUndefined();
  });

  it('gives up after maxRetries and stops at once for a final error', async () => {
    let calls = 0;
    const failing = () => {
      calls++;
      return Promise.reject(apiError(503));
    };
    await expect(
      withRetries(failing, { maxRetries: 2, baseDelayMs: 1, maxDelayMs: 5 }, undefined),
    ).rejects.toThrow('503');
    expect(calls).toBe(3);
    calls = 0;
    const unauthorised = () => {
      calls++;
      return Promise.reject(apiError(401));
    };
    await expect(
      withRetries(unauthorised, { maxRetries: 5, baseDelayMs: 1, maxDelayMs: 5 }, undefined),
    ).rejects.toThrow();
    expect(calls).toBe(1);
  });

  it('stops waiting when the signal aborts', async () => {
    const controller = new AbortController();
    const started = performance.now();
    setTimeout(() => controller.abort(new Error('stop')), 20);
    await expect(
      withRetries(
        () => Promise.reject(apiError(429, { 'retry-after': '30' })),
        { maxRetries: 3, baseDelayMs: 1, maxDelayMs: 60_000 },
        controller.signal,
      ),
    ).rejects.toThrow('stop');
    expect(performance.now() - started).toBeLessThan(1000);
  });
});
