import { afterEach, describe, expect, it } from 'vitest';
import type { RunTree } from '../../src/core/run-tree.ts';
import { startOpenAIServer } from '../fixtures/openai-server.ts';
import { runCli, tempHome } from '../helpers/cli.ts';
import { cadreInProcess } from '../helpers/cli-in-process.ts';

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

/** The stored tree, read in this process: what is tested here is the killed or signalled one. */
async function tree(env: Record<string, string>, id: string): Promise<RunTree> {
  return JSON.parse((await cadreInProcess(['runs', 'show', id, '--json'], env)).stdout) as RunTree;
}

describe('runs whose process is killed', { timeout: 60_000 }, () => {
  it('are marked interrupted on the next start, with the whole tree', async () => {
    const { env, started } = await hangingSubAgent();
    const killed = await runCli(['ask', 'Start something long'], env, {
      onSpawn: (child) => void started.then(() => child.kill('SIGKILL')),
    });
    expect(killed.signal).toBe('SIGKILL');
    const listed = JSON.parse((await cadreInProcess(['runs', 'list', '--json'], env)).stdout).runs;
    expect(listed[0]).toMatchObject({ status: 'interrupted' });
    const shown = await tree(env, listed[0].id);
    expect(shown.status).toBe('interrupted');
    expect(shown.endedAt).not.toBeNull();
    expect(shown.children.map((child) => child.status)).toEqual(['interrupted']);
    expect(shown.children[0]!.error).toMatch(/process running it \(pid \d+ on .+\) ended/);
    const text = await cadreInProcess(['runs', 'list'], env);
    expect(text.stdout).toMatch(/interrupted/);
  });

  it('stop promptly on Ctrl-C (SIGINT), and the tree is recorded as cancelled', async () => {
    const { env, started } = await hangingSubAgent();
    let interruptedAt = 0;
    const result = await runCli(['ask', '--json', 'Start something long'], env, {
      onSpawn: (child) => {
        void started.then(() => {
          interruptedAt = performance.now();
          child.kill('SIGINT');
        });
      },
    });
    const stoppedAfter = performance.now() - interruptedAt;
    expect(stoppedAfter).toBeLessThan(2000);
    expect(result.code).toBe(130);
    const output = JSON.parse(result.stdout) as { status: string; run: RunTree };
    expect(output.status).toBe('cancelled');
    expect(output.run.children[0]!.status).toBe('cancelled');
    const listed = await cadreInProcess(['runs', 'list', '--json'], env);
    expect(JSON.parse(listed.stdout).runs[0]).toMatchObject({ id: output.run.id, status: 'cancelled' });
    expect((await tree(env, output.run.id)).children[0]!.status).toBe('cancelled');
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
