import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { startOpenAIServer } from '../fixtures/openai-server.ts';
import { CLI_ENTRY, childEnv, fixtureModelEnv } from '../helpers/cli.ts';

const CENSUS = fileURLToPath(new URL('../fixtures/timer-census.mjs', import.meta.url));

interface Census {
  created: Array<{ kind: string; ms: number; site: string }>;
  fires: Array<{ at: number; kind: string; ms: number; site: string }>;
}

// A one-shot `cadre ask` waits on its model, its sub-agent and its tools, and on nothing else: no timer of
// Cadre's own wakes it while a model request is out (no stop poll, no store poll, no checkpoint look),
// and none repeats. Timers that stand for a time limit (a run's deadline, a model call's timeout) are
// set and cleared, never fired. Embedded only: a worker (runs as jobs) keeps its lease with a heartbeat.
describe.skipIf(process.env.CADRE_TEST_MODE === 'postgres')('a one-shot cadre ask', () => {
  it('runs no timer of its own while it waits on its model, and no repeating one at all', async () => {
    const waits: Array<{ from: number; to: number }> = [];
    const server = await startOpenAIServer(({ body, system }) => {
      const last = body.messages.at(-1);
      // Each model request is answered after a wait longer than any poll Cadre ever had (150 ms-1 s).
      const from = Date.now();
      waits.push({ from, to: from + 1_500 });
      if (system.includes('## When to delegate')) {
        if (last?.role === 'user')
          return { toolCalls: [{ name: 'math', arguments: { task: 'Compute 17 * 23.' } }], delayMs: 1_500 };
        return { text: 'The product is 391.', delayMs: 1_500 };
      }
      if (last?.role === 'user')
        return { toolCalls: [{ name: 'calculate', arguments: { expression: '17 * 23' } }], delayMs: 1_500 };
      return { text: '17 * 23 = 391', delayMs: 1_500 };
    });
    try {
      const out = join(mkdtempSync(join(tmpdir(), 'census-')), 'timers.json');
      const child = spawn(
        process.execPath,
        ['--import', CENSUS, CLI_ENTRY, 'ask', '--json', 'What is 17 times 23?'],
        {
          env: { ...childEnv(fixtureModelEnv(server)), TIMER_CENSUS: out },
          stdio: ['ignore', 'pipe', 'pipe'],
        },
      );
      let stdout = '';
      child.stdout.on('data', (chunk) => {
        stdout += chunk;
      });
      const code = await new Promise((resolve) => child.on('close', resolve));
      expect(code).toBe(0);
      expect(JSON.parse(stdout)).toMatchObject({ answer: 'The product is 391.', status: 'ok' });
      expect(waits).toHaveLength(4);
      const census = JSON.parse(readFileSync(out, 'utf8')) as Census;
      expect(census.created.filter((timer) => timer.kind === 'setInterval')).toEqual([]);
      // What fired while a model request was out (a margin at each end for the request and the answer).
      const whileWaiting = census.fires.filter((fire) =>
        waits.some((wait) => fire.at > wait.from + 100 && fire.at < wait.to - 100),
      );
      expect(whileWaiting).toEqual([]);
    } finally {
      await server.close();
    }
  }, 60_000);
});
