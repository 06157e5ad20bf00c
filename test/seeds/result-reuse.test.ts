import { describe, expect, it } from 'vitest';
import type { RunTree } from '../../src/core/run-tree.ts';
import type { FixtureScript } from '../fixtures/openai-server.ts';
import { cadreInProcess, fixtureCadre } from '../helpers/cli-in-process.ts';

const isMain = (system: string) => system.includes('## When to delegate');
const isResearch = (system: string) => system.includes("Cadre's research sub-agent");

/** Main asks research the same task for every question; research answers with a cited line. */
const script: FixtureScript = ({ body, system }) => {
  const last = body.messages.at(-1);
  if (isMain(system)) {
    if (last?.role === 'user')
      return { toolCalls: [{ name: 'research', arguments: { task: 'Who  wrote Dune?' } }] };
    return { text: 'Frank Herbert wrote Dune.' };
  }
  if (isResearch(system)) return { text: '- Frank Herbert wrote Dune (1965).' };
  return { status: 400 };
};

async function setup(config: object = {}) {
  const { server, env } = await fixtureCadre(script, config);
  const ask = async (question: string, session?: string) => {
    const result = await cadreInProcess(
      ['ask', '--json', ...(session ? ['--session', session] : []), question],
      env,
    );
    expect(result.code).toBe(0);
    return JSON.parse(result.stdout) as { sessionId: string; run: RunTree };
  };
  const researchCalls = () => server.requests.filter((request) => isResearch(request.system)).length;
  return { ask, researchCalls, env };
}

describe('identical sub-agent tasks are reused across questions of a session, within a TTL', () => {
  it('a second question in the same session reuses the result, marked in the tree; another session does not', async () => {
    const { ask, researchCalls, env } = await setup();
    const first = await ask('Who wrote Dune?');
    const original = first.run.children[0]!;
    expect(original).toMatchObject({ agent: 'research', status: 'ok' });
    expect(researchCalls()).toBe(1);

    // The same task (whitespace aside) in a later question of the session: no new run, the earlier result.
    const second = await ask('And who wrote it, again?', first.sessionId);
    expect(researchCalls()).toBe(1);
    expect(second.run.children).toEqual([]);
    expect(second.run.toolCalls).toEqual([
      expect.objectContaining({
        name: 'research',
        ok: true,
        reused: { runId: original.id, finishedAt: expect.any(String) },
      }),
    ]);
    expect(second.run.subtreeUsage).toEqual(second.run.usage);

    // The stored tree says so too.
    const shown = await cadreInProcess(['runs', 'show', second.run.id], env);
    expect(shown.stdout).toMatch(
      new RegExp(`↺ research "Who wrote Dune\\?"  reused from run ${original.id}`),
    );

    // A new session starts fresh.
    await ask('Who wrote Dune?');
    expect(researchCalls()).toBe(2);
  });

  it('delegation.reuseTtlSeconds sets the time; past it, or at 0, the sub-agent runs again', async () => {
    const expired = await setup({ delegation: { reuseTtlSeconds: 0.001 } });
    const first = await expired.ask('Who wrote Dune?');
    await expired.ask('Again?', first.sessionId);
    expect(expired.researchCalls()).toBe(2);

    const off = await setup({ delegation: { reuseTtlSeconds: 0 } });
    const again = await off.ask('Who wrote Dune?');
    const repeated = await off.ask('Again?', again.sessionId);
    expect(off.researchCalls()).toBe(2);
    expect(repeated.run.toolCalls[0]!.reused).toBeUndefined();
  });
});
