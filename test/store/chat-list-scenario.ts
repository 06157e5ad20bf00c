import { expect } from 'vitest';
import type { Store } from '../../src/store/store.ts';

/**
 * What a chat list is told of (`SessionStore.watchLists`), written through `writing` and heard through
 * `watching` (one store, or two on one database standing for two processes): a chat made, a tree started
 * and ended in it, an answer stored. Each step waits until the watcher is told and the change can be read,
 * looked at only when told (never on a timer), so a change the store does not tell of hangs the test.
 */
export async function chatListIsTold(writing: Store, watching: Store, userId: string): Promise<void> {
  const looks = new Set<() => void>();
  // Looks one at a time, all done before the stores close.
  let looking = Promise.resolve();
  /** Resolves once `check` holds, looked at at each change the watcher is told of. */
  const told = (check: () => Promise<boolean>) =>
    new Promise<void>((resolve) => {
      const look = () => {
        looking = looking.then(async () => {
          if (looks.has(look) && (await check())) {
            looks.delete(look);
            resolve();
          }
        });
      };
      looks.add(look);
    });
  // Watching has begun once the watcher is first called (PostgreSQL: LISTEN is in place).
  const ready = told(async () => true);
  const unwatch = watching.sessions.watchLists(() => {
    for (const look of [...looks]) look();
  });
  try {
    await ready;
    const made = told(async () => (await watching.sessions.list(userId)).length === 1);
    const session = await writing.sessions.create(userId, { title: 'owls' });
    await made;
    const base = { rootRunId: 'r1', runId: 'r1', parentRunId: null, depth: 0, agent: 'main', time: 1 };
    const running = async () => (await watching.runs.listRuns(userId, { status: 'running' })).length;
    const started = told(async () => (await running()) === 1);
    writing.runs.record({
      ...base,
      seq: 0,
      type: 'run-start',
      task: 't',
      model: 'm:x',
      userId,
      sessionId: session.id,
    });
    await started;
    const usage = { inputTokens: 0, outputTokens: 0, totalTokens: 0 };
    const ended = told(async () => (await running()) === 0);
    writing.runs.record({
      ...base,
      seq: 1,
      type: 'run-finish',
      status: 'ok',
      summary: 'done',
      usage,
      subtreeUsage: usage,
    });
    await ended;
    const answered = told(
      async () => (await watching.sessions.get(userId, session.id))?.messages.length === 1,
    );
    await writing.sessions.append(userId, session.id, { role: 'assistant', content: 'done', runId: 'r1' });
    await answered;
    expect(looks.size).toBe(0);
  } finally {
    unwatch();
    await looking;
  }
}
