import { describe, expect, it } from 'vitest';
import type {
  ApprovalStore,
  JobSignals,
  SharedSecrets,
  TreeLedgerStore,
  TreeQueue,
} from '../../src/store/job-queue.ts';
import { openPostgresStore } from '../../src/store/postgres/postgres-store.ts';
import { freshSchema, TEST_DATABASE_URL } from '../helpers/postgres.ts';

// The job engine by concern: each small interface's contract, held by two processes' stores on one
// database (what one does, the other sees). Claims have theirs in claims.test.ts; setting aside, dead
// letters and workers' leases in theirs.

/** Two stores on one fresh schema, as two processes would open it; closed when the test ends. */
async function twoProcesses(name: string) {
  const url = await freshSchema(name);
  const stores = [await openPostgresStore(url), await openPostgresStore(url)];
  const [first, second] = [await stores[0]!.jobs(), await stores[1]!.jobs()];
  return { first, second, close: () => Promise.all(stores.map((store) => store.close())) };
}

/** Resolves with the first payload `listen` hands `signal`'s listener. */
async function nextSignal(signals: JobSignals, signal: Parameters<JobSignals['signal']>[0]) {
  let heard: (payload: string) => void = () => {};
  const payload = new Promise<string>((resolve) => {
    heard = resolve;
  });
  const unlisten = await signals.listen(signal, (value) => {
    if (value !== '*') heard(value);
  });
  return { payload: payload.finally(unlisten) };
}

describe.skipIf(!TEST_DATABASE_URL)('the job engine by concern, on PostgreSQL', () => {
  it("TreeLedgerStore: every process's charges add up per tree", async () => {
    const { first, second, close } = await twoProcesses('ledger');
    try {
      const a: TreeLedgerStore = first;
      const b: TreeLedgerStore = second;
      expect(await a.spent('run_tree')).toBe(0);
      expect(await a.charge('run_tree', 120)).toBe(120);
      expect(await b.charge('run_tree', 30)).toBe(150);
      expect(await b.charge('run_other', 5)).toBe(5);
      expect([await a.spent('run_tree'), await b.spent('run_other')]).toEqual([150, 5]);
    } finally {
      await close();
    }
  });

  it('SharedSecrets: made once by whichever asks first, the same for every process, one per name', async () => {
    const { first, second, close } = await twoProcesses('secrets');
    try {
      const a: SharedSecrets = first;
      const b: SharedSecrets = second;
      const key = await a.sharedSecret('approval-key');
      expect(key.length).toBe(32);
      expect((await b.sharedSecret('approval-key')).equals(key)).toBe(true);
      expect((await b.sharedSecret('another')).equals(key)).toBe(false);
    } finally {
      await close();
    }
  });

  it('JobSignals: a signal one process sends is heard by the others listening', async () => {
    const { first, second, close } = await twoProcesses('signals');
    try {
      const a: JobSignals = first;
      const b: JobSignals = second;
      const heard = await nextSignal(b, 'stop');
      await a.signal('stop', '{"root":"run_tree"}');
      expect(await heard.payload).toBe('{"root":"run_tree"}');
    } finally {
      await close();
    }
  });

  it('ApprovalStore: a request is listed for its user only, decided once by that user from any process, and taken once', async () => {
    const { first, second, close } = await twoProcesses('approvals');
    try {
      const worker: ApprovalStore & JobSignals = first;
      const server: ApprovalStore & JobSignals = second;
      const request = { approvalId: 'ap_1', userId: 'ada', request: '{"tool":"bash"}' };
      await worker.putApproval(request);
      await worker.putApproval({ approvalId: 'ap_2', userId: 'ada', request: '{"tool":"write"}' });
      expect((await server.pendingApprovals('ada')).map((stored) => stored.approvalId)).toEqual([
        'ap_1',
        'ap_2',
      ]);
      expect(await server.pendingApprovals('bob')).toEqual([]);
      expect(await worker.takeDecision('ap_1')).toBeUndefined();
      // Another user cannot decide it; its user can, once, and the waiting process is told.
      expect(await server.decideApproval('bob', 'ap_1', '"allow"')).toBe(false);
      const decided = await nextSignal(worker, 'decided');
      expect(await server.decideApproval('ada', 'ap_1', '"allow"')).toBe(true);
      expect(await decided.payload).toBe('ap_1');
      expect(await server.decideApproval('ada', 'ap_1', '"deny"')).toBe(false);
      expect((await server.pendingApprovals('ada')).map((stored) => stored.approvalId)).toEqual(['ap_2']);
      expect(await worker.takeDecision('ap_1')).toBe('"allow"');
      expect(await worker.takeDecision('ap_1')).toBeUndefined();
      // A decision the asking process made on a request the worker has not recorded yet is kept for it.
      await server.decideSeenApproval({ approvalId: 'ap_3', userId: 'ada', request: '{}' }, '"deny"');
      await worker.putApproval({ approvalId: 'ap_3', userId: 'ada', request: '{}' });
      expect(await worker.takeDecision('ap_3')).toBe('"deny"');
      // One nobody answered is withdrawn.
      await worker.dropApproval('ap_2');
      expect(await server.pendingApprovals('ada')).toEqual([]);
    } finally {
      await close();
    }
  });

  it('TreeQueue.withdraw: a job no worker has taken comes off the queue; one a worker holds stays its', async () => {
    const { first, second, close } = await twoProcesses('withdraw');
    try {
      const asker: TreeQueue = first;
      const worker: TreeQueue = second;
      const lease = await worker.enlist({ name: 'w', standing: true });
      const place = () => ({ rootRunId: 'run_a', runId: 'run_a' });
      await asker.enqueue('tree', 'tree:run_a', { rootRunId: 'run_a' });
      expect(await asker.withdraw('tree', 'tree:run_a')).toBe(true);
      expect((await asker.state('tree', 'tree:run_a')).state).toBe('failed');
      expect(await worker.take(5, lease.id, place)).toEqual([]);
      expect(await asker.withdraw('tree', 'tree:run_a')).toBe(false);
      await asker.enqueue('tree', 'tree:run_b', { rootRunId: 'run_b' });
      const [taken] = await worker.take(1, lease.id, place);
      expect(taken?.kind).toBe('tree');
      expect(await asker.withdraw('tree', 'tree:run_b')).toBe(false);
      expect(await asker.state('tree', 'tree:run_b')).toEqual({ state: 'active' });
      expect(await asker.withdraw('tree', 'tree:run_missing')).toBe(false);
    } finally {
      await close();
    }
  });
});
