import { afterEach, describe, expect, it } from 'vitest';
import type { RunTree } from '../../src/core/run-tree.ts';
import { startOpenAIServer } from '../fixtures/openai-server.ts';
import { runCli, tempHome } from '../helpers/cli.ts';

const isMain = (system: string) => system.includes('## When to delegate');

let close: (() => Promise<void>) | undefined;
afterEach(async () => {
  await close?.();
  close = undefined;
});

/** Main delegates to math, whose model never answers; `started` settles when math's request arrives. */
async function hangingSubAgent() {
  let resolveStarted: () => void = () => {};
  const started = new Promise<void>((resolve) => {
    resolveStarted = resolve;
  });
  const server = await startOpenAIServer(({ body, system }) => {
    if (isMain(system) && body.messages.at(-1)?.role === 'user')
      return { toolCalls: [{ name: 'math', arguments: { task: 'A very long job.' } }] };
    if (isMain(system)) return { text: 'Done.' };
    resolveStarted();
    return { hang: true };
  });
  close = server.close;
  const env = {
    CADRE_HOME: tempHome(),
    CADRE_MODEL: 'compatible:m',
    CADRE_COMPATIBLE_BASE_URL: server.baseURL,
  };
  return { env, started };
}

async function tree(env: Record<string, string>, id?: string): Promise<RunTree> {
  const runId = id ?? JSON.parse((await runCli(['runs', 'list', '--json'], env)).stdout).runs[0].id;
  return JSON.parse((await runCli(['runs', 'show', runId, '--json'], env)).stdout) as RunTree;
}

describe('runs whose process is killed', { timeout: 60_000 }, () => {
  it('are marked interrupted on the next start, with the whole tree', async () => {
    const { env, started } = await hangingSubAgent();
    const killed = await runCli(['ask', 'Start something long'], env, {
      onSpawn: (child) => void started.then(() => child.kill('SIGKILL')),
    });
    expect(killed.signal).toBe('SIGKILL');
    const listed = JSON.parse((await runCli(['runs', 'list', '--json'], env)).stdout).runs;
    expect(listed[0]).toMatchObject({ status: 'interrupted' });
    const shown = await tree(env, listed[0].id);
    expect(shown.status).toBe('interrupted');
    expect(shown.endedAt).not.toBeNull();
    expect(shown.children.map((child) => child.status)).toEqual(['interrupted']);
    expect(shown.children[0]!.error).toMatch(/process running it \(pid \d+ on .+\) ended/);
    const text = await runCli(['runs', 'list'], env);
    expect(text.stdout).toMatch(/interrupted/);
  });

  it.each(['SIGTERM', 'SIGHUP'] as const)(
    'stop like Ctrl-C on %s: cancelled, and the delegation call says so',
    async (signal) => {
      const { env, started } = await hangingSubAgent();
      const result = await runCli(['ask', '--json', 'Start something long'], env, {
        onSpawn: (child) => void started.then(() => child.kill(signal)),
      });
      expect(result.code).toBe(130);
      const output = JSON.parse(result.stdout) as { status: string; run: RunTree };
      expect(output.status).toBe('cancelled');
      const stored = await tree(env, output.run.id);
      expect(stored.children[0]!.status).toBe('cancelled');
      expect(stored.toolCalls[0]).toMatchObject({ name: 'math', ok: false });
      expect(stored.toolCalls[0]!.error).toMatch(/ended cancelled/);
    },
  );
});

describe('cadre runs rm and prune', () => {
  it('removes one tree by id, or every finished tree older than a duration', async () => {
    const server = await startOpenAIServer(({ body, system }) => {
      if (isMain(system) && body.messages.at(-1)?.role === 'user')
        return { toolCalls: [{ name: 'math', arguments: { task: '1 + 1' } }] };
      return { text: '2' };
    });
    close = server.close;
    const env = {
      CADRE_HOME: tempHome(),
      CADRE_MODEL: 'compatible:m',
      CADRE_COMPATIBLE_BASE_URL: server.baseURL,
    };
    const first = JSON.parse((await runCli(['ask', '--json', 'One plus one'], env)).stdout).run as RunTree;
    await runCli(['ask', '--json', 'One plus one again'], env);

    const child = await runCli(['runs', 'rm', first.children[0]!.id], env);
    expect(child.code).toBe(2);
    expect(child.stderr).toContain(`cadre runs rm ${first.id}`);
    expect((await runCli(['runs', 'rm', first.id], env)).code).toBe(0);
    const gone = await runCli(['runs', 'show', first.id], env);
    expect(gone.code).toBe(2);
    expect(gone.stderr).toMatch(/no run/);
    expect((await runCli(['runs', 'rm', first.id], env)).code).toBe(2);

    const kept = await runCli(['runs', 'prune', '--older-than', '30d'], env);
    expect(kept.stdout).toMatch(/Removed 0 run trees/);
    expect(JSON.parse((await runCli(['runs', 'list', '--json'], env)).stdout).runs).toHaveLength(1);
    const pruned = await runCli(['runs', 'prune', '--older-than', '0s', '--json'], env);
    expect(JSON.parse(pruned.stdout)).toEqual({ removed: 1 });
    expect(JSON.parse((await runCli(['runs', 'list', '--json'], env)).stdout).runs).toEqual([]);
    const bad = await runCli(['runs', 'prune', '--older-than', 'a month'], env);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/30d/);
  }, 60_000);
});
