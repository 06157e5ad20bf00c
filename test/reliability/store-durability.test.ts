import { spawn } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/store/sqlite/database.ts';
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import { startOpenAIServer } from '../fixtures/openai-server.ts';
import { runCli, tempHome } from '../helpers/cli.ts';
import { storeReader } from '../helpers/store-reader.ts';

const DATABASE_MODULE = fileURLToPath(new URL('../../src/store/sqlite/database.ts', import.meta.url));

let servers: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  await Promise.all(servers.map((server) => server.close()));
  servers = [];
});

/** Opens `path` in a separate Node process; resolves to its exit code and stderr. */
function openInChild(path: string, startAt: number): Promise<{ code: number | null; stderr: string }> {
  // Each child loads the module, then waits for the same instant, so the opens really overlap.
  const script = `const { openDatabase } = await import(${JSON.stringify(DATABASE_MODULE)});
while (Date.now() < ${startAt}) {}
openDatabase(${JSON.stringify(path)}).close();`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk) => {
    stderr += chunk;
  });
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stderr })));
}

describe('the store under several processes and kills', () => {
  it('opens a fresh data folder from several processes at once, every one succeeding', async () => {
    {
      const path = join(tempHome(), 'cadre.db');
      const startAt = Date.now() + 1_200;
      const results = await Promise.all(Array.from({ length: 6 }, () => openInChild(path, startAt)));
      expect(results.map((result) => result.stderr.trim())).toEqual(results.map(() => ''));
      expect(results.map((result) => result.code)).toEqual(results.map(() => 0));
      const db = openDatabase(path);
      const migrations = db.prepare('SELECT count(*) AS n FROM migrations').get() as { n: number };
      db.close();
      expect(migrations.n).toBeGreaterThan(0);
    }
  });

  it('has a tool result the model saw on disk when the process is killed during the next model request', async () => {
    let child: import('node:child_process').ChildProcess | undefined;
    const server = await startOpenAIServer(({ index }) => {
      // Two tool steps: the second runs with mathjs already loaded, so its result comes back at once.
      if (index === 0) return { toolCalls: [{ name: 'calculate', arguments: { expression: '6 * 7' } }] };
      if (index === 1) return { toolCalls: [{ name: 'calculate', arguments: { expression: '6 * 8' } }] };
      // The tool result is in this request: the model has seen it. Kill the process right now.
      child?.kill('SIGKILL');
      return { hang: true };
    });
    servers.push(server);
    const home = tempHome();
    const env = {
      CADRE_HOME: home,
      CADRE_MODEL: 'compatible:fixture',
      CADRE_COMPATIBLE_BASE_URL: server.baseURL,
    };
    const result = await runCli(['ask', '--agent', 'math', 'What is 6 * 7?'], env, {
      onSpawn: (spawned) => {
        child = spawned;
      },
    });
    expect(result.signal).toBe('SIGKILL');
    expect(server.requests).toHaveLength(3);
    const reader = storeReader(env);
    const query =
      "SELECT type, body FROM events WHERE type IN ('tool-call', 'tool-result') ORDER BY root_seq";
    let rows: Array<{ type: string; body: string }>;
    if (reader.engine === 'sqlite') {
      // What the killed process secured in its spool is applied by the next process to open the store.
      const spool = join(home, 'cadre.db-spool');
      expect(readdirSync(spool).filter((name) => name.endsWith('.spool'))).toHaveLength(1);
      const store = openSqliteStore(join(home, 'cadre.db'));
      rows = store.database.prepare(query).all() as typeof rows;
      await store.close();
      expect(readdirSync(spool)).toEqual([]);
    } else {
      // PostgreSQL: committed by the database before the next model request went out.
      rows = await reader.rows(query);
    }
    await reader.close();
    expect(rows.map((row) => row.type)).toEqual(['tool-call', 'tool-result', 'tool-call', 'tool-result']);
    expect(rows[3]!.body).toContain('48');
  });
});
