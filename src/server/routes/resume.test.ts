import { describe, expect, it } from 'vitest';
import { chatBody, mathDelegation, postJson, readChunks, testServer } from '../../../test/helpers/server.ts';
import { whenStored } from '../../../test/helpers/store-waits.ts';
import { markInterruptedRuns } from '../../store/sqlite/run-maintenance.ts';

describe('POST /api/runs/:id/resume', () => {
  it('continues an interrupted tree from its journal, asking the model only for what was not committed', async () => {
    const { app, model, store, cadre } = await testServer(mathDelegation);
    await readChunks(await app.request('/api/chat', postJson(chatBody('s1', 'What is 17 times 23?'))));
    await cadre.store.runs.flush();
    const db = store.database;
    const root = db.prepare('SELECT id FROM runs WHERE parent_id IS NULL').get() as { id: string };
    // As if the process had died after math's first step: later commits never happened.
    const kept = 3;
    db.prepare('DELETE FROM journal WHERE position > ?').run(kept);
    db.prepare("DELETE FROM events WHERE type = 'run-finish'").run();
    db.prepare("UPDATE runs SET status = 'running', owner_pid = 999999999").run();
    await markInterruptedRuns(db, { isAlive: () => false });
    const callsBefore = model.calls.length;

    const response = await app.request(`/api/runs/${root.id}/resume`, { method: 'POST' });
    expect(response.status).toBe(202);
    const { runId, resumedFrom } = (await response.json()) as { runId: string; resumedFrom: string };
    expect(resumedFrom).toBe(root.id);
    expect(runId).not.toBe(root.id);
    // Told when the resumed attempt's answer is stored (no timer stands for it).
    await whenStored(
      cadre.store,
      async () =>
        (await cadre.store.sessions.get('local', 's1'))?.messages.at(-1)?.runId?.startsWith(runId) === true,
      "the resumed attempt's answer",
    );
    const session = await cadre.store.sessions.get('local', 's1');
    expect(session?.messages.map((message) => message.role)).toEqual(['user', 'assistant', 'assistant']);
    expect(session?.messages.at(-1)?.content).toBe('The product is 391.');
    // The first attempt committed main's first step, math's first step and calculate's result: neither
    // first step is asked for again (math's later work may also come from the session's result reuse).
    const asked = model.calls.slice(callsBefore);
    expect(asked.length).toBeGreaterThan(0);
    expect(asked.every((call) => call.prompt.some((message) => message.role === 'tool'))).toBe(true);
  });

  it('refuses a run that is not interrupted (409) and one that does not exist (404)', async () => {
    const { app, store, cadre } = await testServer(mathDelegation);
    await readChunks(await app.request('/api/chat', postJson(chatBody('s2', 'What is 17 times 23?'))));
    await cadre.store.runs.flush();
    const root = store.database.prepare('SELECT id FROM runs WHERE parent_id IS NULL').get() as {
      id: string;
    };
    const finished = await app.request(`/api/runs/${root.id}/resume`, { method: 'POST' });
    expect(finished.status).toBe(409);
    expect(((await finished.json()) as { error: { code: string } }).error.code).toBe('not_interrupted');
    const unknown = await app.request('/api/runs/run_nope/resume', { method: 'POST' });
    expect(unknown.status).toBe(404);
  });
});
