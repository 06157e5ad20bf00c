import type { Store } from '../store/store.ts';

/** How long the database may take to answer a readiness check before the process is reported not ready. */
export const READINESS_TIMEOUT_MS = 3_000;

/** What `GET /ready` says: whether this process can answer questions now, and if not, why. */
export interface Readiness {
  ready: boolean;
  /** Each check, with what it found. */
  checks: {
    database: { ok: boolean; error?: string };
    migrations?: { ok: boolean; pending: string[]; unknown: string[] };
    /** Only where questions are run as jobs and this process runs none itself (`--no-worker`). */
    workers?: { ok: boolean; live: number };
  };
  /** Why it is not ready, in words an operator can act on; empty when ready. */
  reasons: string[];
}

/**
 * Whether this process can answer questions now: its database answers (within READINESS_TIMEOUT_MS),
 * carries every migration this code knows and none it does not (a newer Cadre migrated it), and, when
 * questions run as jobs and this process runs none itself, at least one worker holds its lease. Unlike
 * `/health`, which only says the process is up, this touches the database and the queue.
 */
export async function readiness(
  parts: { store: Pick<Store, 'health' | 'jobs'> },
  options: { needsWorker: boolean; timeoutMs?: number },
): Promise<Readiness> {
  const reasons: string[] = [];
  const timeoutMs = options.timeoutMs ?? READINESS_TIMEOUT_MS;
  const within = <T>(work: Promise<T>): Promise<T> =>
    Promise.race([
      work,
      new Promise<never>((_, reject) => {
        const timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
        timer.unref?.();
        void work.finally(() => clearTimeout(timer)).catch(() => {});
      }),
    ]);
  let health: Awaited<ReturnType<Store['health']>>;
  try {
    health = await within(parts.store.health());
  } catch (error) {
    const message = (error as Error).message;
    reasons.push(`the database cannot be reached: ${message}`);
    return { ready: false, checks: { database: { ok: false, error: message } }, reasons };
  }
  const checks: Readiness['checks'] = { database: { ok: true } };
  const migrationsOk = !health.pending.length && !health.unknown.length;
  checks.migrations = { ok: migrationsOk, ...health };
  if (health.pending.length)
    reasons.push(
      `the database lacks ${health.pending.length} migration(s) this Cadre needs (${health.pending.join(', ')}): start a Cadre process of this version, which applies them as it opens the database`,
    );
  if (health.unknown.length)
    reasons.push(
      `the database was migrated by a newer Cadre (${health.unknown.join(', ')}): upgrade this process`,
    );
  if (options.needsWorker && parts.store.jobs) {
    try {
      const live = await within((async () => (await parts.store.jobs!()).liveWorkers())());
      checks.workers = { ok: live > 0, live };
      if (!live)
        reasons.push('no worker is running: questions would wait in the queue (start `cadre worker`)');
    } catch (error) {
      checks.workers = { ok: false, live: 0 };
      reasons.push(`the queue cannot be read: ${(error as Error).message}`);
    }
  }
  return { ready: reasons.length === 0, checks, reasons };
}
