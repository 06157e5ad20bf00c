import { describe, expect, it } from 'vitest';
import { tempHome } from '../../test/helpers/cli.ts';
import type { CadreEvent } from '../core/events.ts';
import { ScriptedModel } from '../models/scripted-model.ts';
import { openSqliteStore } from '../store/sqlite/sqlite-store.ts';
import { Cadre } from './create-cadre.ts';

/** Main delegates to math once, then answers with what it got; `gate` holds math's answer back. */
function delegatingModel(gate?: Promise<void>) {
  return new ScriptedModel(async (request) => {
    if (!request.toolNames.includes('math')) {
      await gate;
      return { text: '42' };
    }
    return request.toolResults.length
      ? { text: 'The answer is 42.' }
      : { toolCalls: [{ name: 'math', input: { task: 'What is 6*7?' } }] };
  });
}

async function cadreWith(model: ScriptedModel) {
  const store = openSqliteStore(':memory:');
  store.database
    .prepare("INSERT INTO users (id, name, created_at) VALUES ('alice', 'alice', 0), ('bob', 'bob', 0)")
    .run();
  return Cadre.create({
    env: { CADRE_HOME: tempHome() },
    cwd: tempHome(),
    store,
    flags: { model: 'test:scripted' },
    models: { 'test:scripted': model },
  });
}

describe('the ask use case', () => {
  it('stores the question, streams the tree live, stores the answer, and scopes all of it to the user', async () => {
    const cadre = await cadreWith(delegatingModel());
    const run = await cadre.ask({ userId: 'alice', message: 'What is 6*7?' });
    const seen: CadreEvent[] = [];
    for await (const { cursor, event } of run.events()) {
      expect(cursor).toBe(seen.length + 1);
      seen.push(event);
    }
    const result = await run.result;
    expect(result).toMatchObject({ answer: 'The answer is 42.', status: 'ok', sessionId: run.sessionId });
    expect(seen[0]).toMatchObject({ type: 'run-start', userId: 'alice', rootRunId: result.runId });
    expect(seen.some((event) => event.agent === 'math' && event.rootRunId === result.runId)).toBe(true);
    expect(seen.at(-1)).toMatchObject({ type: 'run-finish', runId: result.runId });

    const session = await cadre.sessions.get('alice', run.sessionId);
    expect(session.messages).toEqual([
      expect.objectContaining({ role: 'user', content: 'What is 6*7?' }),
      expect.objectContaining({ role: 'assistant', content: 'The answer is 42.', runId: result.runId }),
    ]);
    expect(await cadre.runs.get('alice', result.runId)).toEqual(result.run);
    const replayed = [];
    for await (const stored of cadre.runs.events('alice', result.runId, { after: 2 })) replayed.push(stored);
    expect(replayed.map((stored) => stored.event)).toEqual(seen.slice(2));

    await expect(cadre.sessions.get('bob', run.sessionId)).rejects.toMatchObject({ code: 'unknown_session' });
    await expect(cadre.runs.get('bob', result.runId)).rejects.toMatchObject({ code: 'unknown_run' });
    expect(await cadre.runs.list('bob')).toEqual([]);
    await expect(
      cadre.ask({ userId: 'bob', sessionId: run.sessionId, message: 'and mine?' }),
    ).rejects.toMatchObject({ code: 'unknown_session' });
    await cadre.close();
  });

  it('continues a session with its history, and creates one under a chosen id when asked to', async () => {
    const model = new ScriptedModel((request) => ({ text: `heard ${request.prompt.length} messages` }));
    const cadre = await cadreWith(model);
    const first = await cadre.ask({
      userId: 'alice',
      sessionId: 'chat-1',
      createSession: true,
      message: 'one',
    });
    await first.result;
    const second = await cadre.ask({ userId: 'alice', sessionId: 'chat-1', message: 'two' });
    expect((await second.result).answer).toBe('heard 4 messages');
    await expect(cadre.ask({ userId: 'alice', sessionId: 'nope', message: 'x' })).rejects.toMatchObject({
      fault: 'user',
      code: 'unknown_session',
    });
    await expect(cadre.ask({ userId: 'alice', agent: 'nobody', message: 'x' })).rejects.toMatchObject({
      code: 'unknown_agent',
    });
    await cadre.close();
  });

  it('lets another request follow and stop a running tree, for its owner only', async () => {
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const cadre = await cadreWith(delegatingModel(gate));
    const run = await cadre.ask({ userId: 'alice', message: 'What is 6*7?' });
    await expect(cadre.runs.cancel('bob', run.rootRunId)).rejects.toMatchObject({ code: 'unknown_run' });
    const follower = (async () => {
      const types: string[] = [];
      for await (const { event } of cadre.runs.events('alice', run.rootRunId)) types.push(event.type);
      return types;
    })();
    expect(await cadre.runs.cancel('alice', run.rootRunId)).toEqual({ cancelled: true });
    release();
    const result = await run.result;
    expect(result.status).toBe('cancelled');
    expect((await follower).at(-1)).toBe('run-finish');
    expect((await cadre.runs.get('alice', run.rootRunId)).status).toBe('cancelled');
    await cadre.close();
  });
});
