import { describe, expect, it } from 'vitest';
import { testServer } from '../../test/helpers/server.ts';
import { readiness } from './readiness.ts';

const current = { pending: [], unknown: [], applied: [] };

describe('readiness', () => {
  it('is ready on an embedded store that answers and is migrated (GET /ready beside /health)', async () => {
    const { app } = await testServer(() => ({ text: 'hi' }));
    const response = await app.request('/ready');
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({
      ready: true,
      reasons: [],
      checks: { database: { ok: true }, migrations: { ok: true, pending: [], unknown: [] } },
    });
  });

  it('is not ready when the database fails or does not answer in time, saying why', async () => {
    const failing = await readiness(
      { store: { health: () => Promise.reject(new Error('connection refused')) } },
      { needsWorker: false },
    );
    expect(failing).toMatchObject({ ready: false, checks: { database: { ok: false } } });
    expect(failing.reasons).toEqual(['the database cannot be reached: connection refused']);
    const silent = await readiness(
      { store: { health: () => new Promise(() => {}) } },
      { needsWorker: false, timeoutMs: 20 },
    );
    expect(silent.reasons).toEqual(['the database cannot be reached: no answer within 20 ms']);
  });

  it('names migrations the database lacks, and workers it needs but has none of', async () => {
    const behind = await readiness(
      { store: { health: async () => ({ pending: ['016_versions'], unknown: [], applied: [] }) } },
      { needsWorker: false },
    );
    expect(behind.ready).toBe(false);
    expect(behind.reasons[0]).toMatch(
      /lacks 1 migration\(s\) this Cadre needs \(016_versions\): start a Cadre process of this version/,
    );
    const jobs = async () => ({ liveWorkers: async () => 0 }) as never;
    const alone = await readiness({ store: { health: async () => current, jobs } }, { needsWorker: true });
    expect(alone).toMatchObject({ ready: false, checks: { workers: { ok: false, live: 0 } } });
    // A process that works the queue itself needs no other worker.
    expect(
      (await readiness({ store: { health: async () => current, jobs } }, { needsWorker: false })).ready,
    ).toBe(true);
  });
});
