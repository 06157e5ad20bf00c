/**
 * Web tools benchmark: a knowledge lookup served from the SQLite response cache versus one that goes to
 * the (local fixture) API, and the per-host rate limiter's accuracy under a burst, measured where the
 * requests arrive: at a fixture server. Run alone with `npx node bench/web-cache.ts`.
 */

import { SqlHttpCache } from '../src/store/sql/http-cache.ts';
import { openDatabase } from '../src/store/sqlite/database.ts';
import { SqliteSqlDatabase } from '../src/store/sqlite/sql-port.ts';
import { HttpClient } from '../src/tools/http/http-client.ts';
import { RateLimiter } from '../src/tools/http/rate-limiter.ts';
import type { NetworkToolDeps } from '../src/tools/http/tool-support.ts';
import { wikipediaSearchTool } from '../src/tools/knowledge/wikipedia.ts';
import { type ApiFixtures, startApiFixtures } from '../test/fixtures/apis/api-fixtures.ts';
import { send, startFixtureServer } from '../test/fixtures/apis/fixture-server.ts';
import { testToolContext } from '../test/fixtures/apis/network-test-deps.ts';

export interface LookupFigures {
  iterations: number;
  meanMs: number;
  p50Ms: number;
  p95Ms: number;
  requestsToServer: number;
}

export interface RateFigures {
  requests: number;
  perSecond: number;
  burst: number;
  expectedMs: number;
  actualMs: number;
  achievedPerSecond: number;
  /** Arrival time minus the ideal schedule, per request. */
  lateP50Ms: number;
  lateP99Ms: number;
  earliestMs: number;
  /** Most requests that arrived within any one-second window (limit: burst + perSecond). */
  maxInAnySecond: number;
}

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
};
const round = (value: number) => Math.round(value * 1000) / 1000;

async function timeLookups(
  fixtures: ApiFixtures,
  iterations: number,
  queryFor: (index: number) => string,
): Promise<LookupFigures> {
  const db = openDatabase(':memory:');
  const deps: NetworkToolDeps = {
    http: new HttpClient({ cache: new SqlHttpCache(new SqliteSqlDatabase(db)), retry: { retries: 0 } }),
    env: fixtures.env,
    cacheTtl: () => 3_600,
  };
  const tool = wikipediaSearchTool(deps);
  const context = testToolContext();
  await tool.execute({ query: queryFor(-1) }, context);
  const server = fixtures.servers.WIKIPEDIA;
  const before = server.requests.length;
  const times: number[] = [];
  for (let index = 0; index < iterations; index++) {
    const started = performance.now();
    await tool.execute({ query: queryFor(index) }, context);
    times.push(performance.now() - started);
  }
  db.close();
  return {
    iterations,
    meanMs: round(times.reduce((sum, value) => sum + value, 0) / times.length),
    p50Ms: round(percentile(times, 50)),
    p95Ms: round(percentile(times, 95)),
    requestsToServer: server.requests.length - before,
  };
}

/** Cached versus uncached `wikipedia_search` against the local fixture (no real network latency). */
export async function benchLookups(
  iterations = 300,
): Promise<{ uncached: LookupFigures; cached: LookupFigures }> {
  const fixtures = await startApiFixtures();
  try {
    const uncached = await timeLookups(fixtures, iterations, (index) => `distinct query ${index}`);
    const cached = await timeLookups(fixtures, iterations, () => 'the same query');
    return { uncached, cached };
  } finally {
    await fixtures.close();
  }
}

/** A burst of `requests` at once through the client, with the limiter at `perSecond`/`burst`. */
export async function benchRateLimiter(requests = 150, perSecond = 50, burst = 5): Promise<RateFigures> {
  const arrivals: number[] = [];
  const server = await startFixtureServer((_request, response) => {
    arrivals.push(performance.now());
    send(response, '{}', 'application/json');
  });
  try {
    const http = new HttpClient({
      rateLimiter: new RateLimiter({ defaultRate: { perSecond, burst } }),
      retry: { retries: 0 },
    });
    const start = performance.now();
    await Promise.all(
      Array.from({ length: requests }, (_, index) =>
        http.request({ url: `${server.url}/r/${index}`, trust: 'endpoint' }),
      ),
    );
    const relative = arrivals.map((time) => time - start).sort((a, b) => a - b);
    const ideal = relative.map((_, index) => Math.max(0, ((index + 1 - burst) / perSecond) * 1000));
    const late = relative.map((time, index) => time - (ideal[index] ?? 0));
    let maxInAnySecond = 0;
    for (let index = 0, first = 0; index < relative.length; index++) {
      while ((relative[index] ?? 0) - (relative[first] ?? 0) >= 1000) first++;
      maxInAnySecond = Math.max(maxInAnySecond, index - first + 1);
    }
    const spacedSpan = (relative.at(-1) ?? 0) - (relative[burst - 1] ?? 0);
    return {
      requests,
      perSecond,
      burst,
      expectedMs: round(ideal.at(-1) ?? 0),
      actualMs: round(relative.at(-1) ?? 0),
      achievedPerSecond: round((requests - burst) / (spacedSpan / 1000)),
      lateP50Ms: round(percentile(late, 50)),
      lateP99Ms: round(percentile(late, 99)),
      earliestMs: round(Math.min(...late)),
      maxInAnySecond,
    };
  } finally {
    await server.close();
  }
}

export function printWebCache(
  lookups: { uncached: LookupFigures; cached: LookupFigures },
  rate: RateFigures,
): void {
  console.log('Web tools: response cache (wikipedia_search on a local fixture, in-memory SQLite)');
  for (const [label, figures] of [
    ['uncached (fixture round trip + parse + store)', lookups.uncached],
    ['cached   (SQLite hit + parse, no request)    ', lookups.cached],
  ] as const) {
    console.log(
      `  ${label}  mean ${figures.meanMs} ms  p50 ${figures.p50Ms} ms  p95 ${figures.p95Ms} ms  ` +
        `requests to server: ${figures.requestsToServer}/${figures.iterations}`,
    );
  }
  console.log(`  speed-up (p50): ${round(lookups.uncached.p50Ms / Math.max(lookups.cached.p50Ms, 0.001))}x`);
  console.log(
    `\nWeb tools: rate limiter under a burst of ${rate.requests} (limit ${rate.perSecond}/s, burst ${rate.burst})`,
  );
  console.log(
    `  last arrival ${rate.actualMs} ms (ideal ${rate.expectedMs} ms)  achieved ${rate.achievedPerSecond}/s after the burst\n` +
      `  lateness vs ideal schedule: p50 ${rate.lateP50Ms} ms  p99 ${rate.lateP99Ms} ms  earliest ${rate.earliestMs} ms\n` +
      `  most arrivals in any 1 s window: ${rate.maxInAnySecond} (allowed ${rate.burst + rate.perSecond})`,
  );
}

/** Entry point for `bench/run.ts`. */
export async function runWebCacheBench(): Promise<void> {
  printWebCache(await benchLookups(), await benchRateLimiter());
}

if (import.meta.main) await runWebCacheBench();
