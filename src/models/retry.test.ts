import { APICallError } from 'ai';
import { describe, expect, it } from 'vitest';
import { accountProblem, durationMs, providerDelayMs } from './provider-errors.ts';
import { isRetryable, requestedDelayMs, withRetries } from './retry.ts';

const apiError = (
  statusCode: number,
  headers: Record<string, string> = {},
  body?: unknown,
  url = 'http://x',
) =>
  new APICallError({
    message: `status ${statusCode}`,
    url,
    requestBodyValues: {},
    statusCode,
    responseHeaders: headers,
    ...(body ? { responseBody: JSON.stringify(body) } : {}),
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

  it("reads the wait from OpenAI's reset headers and Gemini's RetryInfo", () => {
    expect(
      providerDelayMs(
        apiError(429, { 'x-ratelimit-reset-requests': '6s', 'x-ratelimit-reset-tokens': '1m30s' }),
      ),
    ).toBe(90_000);
    expect(providerDelayMs(apiError(200, { 'x-ratelimit-reset-tokens': '6s' }))).toBeUndefined();
    const gemini = {
      error: {
        code: 429,
        status: 'RESOURCE_EXHAUSTED',
        message: 'You exceeded your current quota.',
        details: [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '34s' }],
      },
    };
    expect(providerDelayMs(apiError(429, {}, gemini))).toBe(34_000);
    expect(durationMs('20ms')).toBe(20);
    expect(durationMs('0.5s')).toBe(500);
    expect(durationMs('soon')).toBeUndefined();
  });

  it('honours a wait the provider asked for past its own cap, and fails at once when it passes the deadline', async () => {
    let calls = 0;
    const limited = () => {
      calls++;
      return calls === 1 ? Promise.reject(apiError(429, { 'retry-after-ms': '40' })) : Promise.resolve('ok');
    };
    const started = performance.now();
    await expect(
      withRetries(limited, { maxRetries: 2, baseDelayMs: 1, maxDelayMs: 5 }, undefined),
    ).resolves.toBe('ok');
    expect(performance.now() - started).toBeGreaterThanOrEqual(35);
    calls = 0;
    const busy = () => {
      calls++;
      return Promise.reject(apiError(429, { 'retry-after': '34' }));
    };
    await expect(
      withRetries(
        busy,
        { maxRetries: 3, baseDelayMs: 1, maxDelayMs: 5 },
        undefined,
        undefined,
        Date.now() + 5_000,
      ),
    ).rejects.toThrow(/asked to wait 34 s .* past this run's time limit/);
    expect(calls).toBe(1);
  });

  it('never retries a used-up quota, and says what to do', async () => {
    let calls = 0;
    const quota = () => {
      calls++;
      const body = {
        error: {
          message: 'You exceeded your current quota, please check your plan and billing details.',
          type: 'insufficient_quota',
          code: 'insufficient_quota',
        },
      };
      return Promise.reject(apiError(429, {}, body, 'http://127.0.0.1:4010/openai/v1/responses'));
    };
    const error = await withRetries(quota, { maxRetries: 3, baseDelayMs: 1, maxDelayMs: 5 }, undefined).catch(
      (caught: unknown) => caught,
    );
    expect(calls).toBe(1);
    expect(error).toMatchObject({ code: 'provider_quota', fault: 'user' });
    expect(String((error as Error).message)).toMatch(
      /OpenAI refused: the account's quota is used up.*Add credit/,
    );
    expect(
      accountProblem(
        apiError(
          400,
          {},
          {
            type: 'error',
            error: {
              type: 'invalid_request_error',
              message: 'Your credit balance is too low to access the Anthropic API.',
            },
          },
          'http://127.0.0.1:4011/anthropic/v1/messages',
        ),
      ),
    ).toMatchObject({ code: 'provider_billing' });
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
