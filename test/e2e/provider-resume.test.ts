import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import { providers } from '../fixtures/providers/provider-setups.ts';
import type { WireCall, WireReply } from '../fixtures/providers/wire-server.ts';
import { CLI_ENTRY, childEnv, tempHome } from '../helpers/cli.ts';
import { cadreInProcess } from '../helpers/cli-in-process.ts';
import { storeReader } from '../helpers/store-reader.ts';

/**
 * A crash in the middle of a delegation, then `cadre runs resume`, on each provider's real wire protocol
 * with reasoning on: the resumed requests replay a history holding Anthropic thinking signatures, OpenAI
 * reasoning items and Gemini thought signatures, which the fixture servers accept only as they issued them.
 * The resume runs on the model the tree ran on (not today's CADRE_MODEL), and counts the steps it replays
 * from the journal once.
 */
const isMain = (call: WireCall) => call.system.includes('## When to delegate');

describe.each(providers)('a crashed tree on $name', (provider) => {
  it('resumes with its replayed history accepted, on its own model, each step counted once', async () => {
    let crashed = false;
    let reached: () => void = () => {};
    const atCrash = new Promise<void>((resolve) => {
      reached = resolve;
    });
    const server = await provider.start((call): WireReply | Promise<WireReply> => {
      if (isMain(call))
        return call.toolResults.length === 0
          ? { toolCalls: [{ name: 'math', input: { task: 'Compute 17 * 23.' } }] }
          : { text: `The product is ${call.toolResults[0]?.output.match(/391/)?.[0] ?? '?'}.` };
      if (call.toolResults.length === 0)
        return { toolCalls: [{ name: 'calculate', input: { expression: '17 * 23' } }] };
      if (!crashed) {
        // The sub-agent's second step: the process is killed while the model is answering it.
        reached();
        return new Promise<WireReply>(() => {});
      }
      return { text: '17 * 23 = 391' };
    });
    onTestFinished(() => server.close());
    const home = tempHome();
    const reasoning = provider.name === 'OpenAI Responses' ? 'low' : { budgetTokens: 2048 };
    writeFileSync(join(home, 'config.json'), JSON.stringify({ reasoning }));
    const env = { CADRE_HOME: home, CADRE_MODEL: provider.model, ...provider.env(server.url) };

    const child = spawn(process.execPath, [CLI_ENTRY, 'ask', 'What is 17 * 23?'], {
      env: childEnv(env),
      stdio: 'ignore',
    });
    const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
    await atCrash;
    child.kill('SIGKILL');
    await exited;
    crashed = true;
    const store = storeReader(env);
    // What the killed process secured but had not yet put in its SQLite tables is applied on opening.
    if (store.engine === 'sqlite') await openSqliteStore(join(home, 'cadre.db')).close();
    const [root] = await store.rows<{ id: string }>('SELECT id FROM runs WHERE parent_id IS NULL');
    await store.close();

    const before = server.requests.length;
    // Today's CADRE_MODEL names another model: the tree goes on with the one it ran on.
    const resumed = await cadreInProcess(['runs', 'resume', root!.id, '--json'], {
      ...env,
      CADRE_MODEL: 'compatible:elsewhere',
    });
    expect(server.refusals()).toEqual([]);
    expect(resumed.code, resumed.stderr).toBe(0);
    const output = JSON.parse(resumed.stdout);
    expect(output.answer).toBe('The product is 391.');
    expect(server.requests.length).toBeGreaterThan(before);
    // Every answered request's tokens, once: the replayed ones are not counted again.
    const billed = server.requests.reduce(
      (sum, request) =>
        sum + (request.usage ? request.usage.input + request.usage.cacheRead + request.usage.cacheWrite : 0),
      0,
    );
    expect(output.run.subtreeUsage.inputTokens).toBe(billed);
  });
});
