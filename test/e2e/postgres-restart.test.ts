/**
 * The database restarting mid-tree: the worker and the asking process reconnect (the pool, pg-boss, the
 * LISTEN connection, the event writer's retries) and the tree finishes. A cluster of its own (started with
 * .ci/start-postgres, which needs root and Debian's PostgreSQL), so restarting it disturbs no other test.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import type { RunTree } from '../../src/core/run-tree.ts';
import { type RecordedRequest, startOpenAIServer } from '../fixtures/openai-server.ts';
import { complaints, fixtureModelEnv, runCli } from '../helpers/cli.ts';
import { startWorker, TEST_DATABASE_URL } from '../helpers/postgres.ts';
import { isMain, isMath } from '../web/web-app-setup.ts';

const postgresBin = existsSync('/usr/lib/postgresql')
  ? readdirSync('/usr/lib/postgresql')
      .map((version) => join('/usr/lib/postgresql', version, 'bin'))
      .find((bin) => existsSync(join(bin, 'pg_ctl')))
  : undefined;
const canRunOwnCluster = Boolean(TEST_DATABASE_URL && postgresBin && process.getuid?.() === 0);
const lastIsUser = (request: RecordedRequest) => request.body.messages.at(-1)?.role === 'user';

describe.skipIf(!canRunOwnCluster)('the database restarting mid-tree', () => {
  it('workers and the asking process reconnect and the tree finishes', async () => {
    // Outside the tests' private temp folder: the cluster runs as the postgres user.
    const folder = mkdtempSync('/tmp/cadre-pg-restart-');
    const script = join(import.meta.dirname, '../../.ci');
    const url = execFileSync('bash', [join(script, 'start-postgres'), folder], { encoding: 'utf8' }).trim();
    onTestFinished(() => {
      execFileSync('bash', [join(script, 'stop-postgres'), folder]);
    });
    let releaseMath = () => {};
    const mathHeld = new Promise<void>((resolve) => {
      releaseMath = resolve;
    });
    const model = await startOpenAIServer((request) => {
      if (isMain(request.system) && lastIsUser(request))
        return { toolCalls: [{ name: 'math', arguments: { task: 'What is 6 times 7?' } }] };
      if (isMain(request.system)) return { text: 'The product is 42.' };
      if (isMath(request.system)) return { text: '6 times 7 is 42.', until: mathHeld };
      return { text: 'unexpected' };
    });
    onTestFinished(() => model.close());
    const env = {
      ...fixtureModelEnv(model),
      CADRE_DATABASE_URL: url,
    };
    await startWorker(env, 'w1', ['--concurrency', '2']);
    const asking = runCli(['ask', '--no-worker', '--json', 'What is 6 times 7?'], env);
    while (!model.requests.some((request) => isMath(request.system)))
      await new Promise((resolve) => setTimeout(resolve, 50));
    const data = join(folder, 'data');
    execFileSync('su', [
      'postgres',
      '-s',
      '/bin/sh',
      '-c',
      `'${postgresBin}/pg_ctl' -D '${data}' -w -m fast restart -l '${folder}/log' >/dev/null`,
    ]);
    releaseMath();
    const asked = await asking;
    expect(complaints(asked.stderr)).toBe('');
    expect(asked.code).toBe(0);
    const result = JSON.parse(asked.stdout) as { answer: string; run: RunTree };
    expect(result.answer).toBe('The product is 42.');
    expect(result.run.children.map((child) => child.status)).toEqual(['ok']);
  }, 120_000);
});
