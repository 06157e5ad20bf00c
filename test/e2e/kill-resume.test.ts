import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterAll, expect, it } from 'vitest';
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import { contentText, type RecordedRequest, startOpenAIServer } from '../fixtures/openai-server.ts';
import { CLI_ENTRY, childEnv, tempHome } from '../helpers/cli.ts';
import { cadreInProcess } from '../helpers/cli-in-process.ts';
import { type StoreReader, storeReader } from '../helpers/store-reader.ts';

/**
 * SIGKILL at many points of a scripted tree, then `cadre runs resume`: main asks math twice in one step
 * (two sub-agents in parallel), each calls `calculate` and answers, then main answers. Every model reply
 * takes a moment, so kills land while a model is answering, as well as right after a journal commit, a
 * sub-agent's start or finish, and a tool call.
 */
const QUESTION = 'What are 17 * 23 and 19 * 29?';
const isMain = (system: string) => system.includes('## When to delegate');
const isMath = (system: string) => system.includes("Cadre's maths sub-agent");

function script(request: RecordedRequest) {
  const { body, system } = request;
  const last = body.messages.at(-1);
  const fromTool = last?.role === 'tool';
  const delayMs = 120;
  if (isMain(system)) {
    if (!fromTool) {
      return {
        delayMs,
        text: 'Asking math. ',
        toolCalls: [
          { id: 'call_m1', name: 'math', arguments: { task: 'Compute 17 * 23.' } },
          { id: 'call_m2', name: 'math', arguments: { task: 'Compute 19 * 29.' } },
        ],
      };
    }
    const results = body.messages
      .filter((message) => message.role === 'tool')
      .map((m) => contentText(m.content));
    const numbers = results.map((text) => text.match(/= (\d+)/)?.[1] ?? '?');
    return { delayMs, text: `The answers are ${numbers.join(' and ')}.` };
  }
  if (isMath(system)) {
    const task = contentText(body.messages.find((message) => message.role === 'user')?.content);
    const [a, b] = task.match(/\d+/g) ?? ['0', '0'];
    if (!fromTool) {
      return {
        delayMs,
        toolCalls: [{ id: `call_calc_${a}`, name: 'calculate', arguments: { expression: `${a} * ${b}` } }],
      };
    }
    return { delayMs, text: `${a} * ${b} = ${contentText(last?.content).match(/\d+/g)?.at(-1)}` };
  }
  return { status: 400 };
}

type Trigger = { label: string; fired: (store: StoreReader, requests: number) => Promise<boolean> };

const triggers: Trigger[] = [
  ...[1, 2, 3, 4, 5, 6].map((k) => ({
    label: `model streaming (request ${k})`,
    fired: async (_store: StoreReader, requests: number) => requests >= k,
  })),
  ...[1, 2, 3, 4, 5, 6, 7, 8, 9, 10].map((j) => ({
    label: `after journal commit ${j}`,
    fired: async (store: StoreReader) => (await store.count('SELECT COUNT(*) AS n FROM journal')) >= j,
  })),
  ...[1, 2].map((j) => ({
    label: `child start ${j}`,
    fired: async (store: StoreReader) =>
      (await store.count('SELECT COUNT(*) AS n FROM runs WHERE parent_id IS NOT NULL')) >= j,
  })),
  ...[1, 2].map((j) => ({
    label: `tool execution ${j}`,
    fired: async (store: StoreReader) =>
      (await store.count(
        "SELECT COUNT(*) AS n FROM events WHERE type = 'tool-call' AND body LIKE '%calculate%'",
      )) >= j,
  })),
  ...[1, 2].map((j) => ({
    label: `child finish ${j}`,
    fired: async (store: StoreReader) =>
      (await store.count(
        "SELECT COUNT(*) AS n FROM runs WHERE parent_id IS NOT NULL AND status != 'running'",
      )) >= j,
  })),
];

type FixtureServer = Awaited<ReturnType<typeof startOpenAIServer>>;
const servers: FixtureServer[] = [];
afterAll(() => Promise.all(servers.map((server) => server.close())));

/** A fresh CADRE_HOME and model server for one kill point, so kill points can run side by side. */
async function fixture() {
  const server = await startOpenAIServer(script);
  servers.push(server);
  const home = tempHome();
  const env = {
    CADRE_HOME: home,
    CADRE_MODEL: 'compatible:fixture',
    CADRE_COMPATIBLE_BASE_URL: server.baseURL,
  };
  return { server, home, env };
}
const bodyOf = (request: RecordedRequest) => JSON.stringify(request.body.messages);

/**
 * Kill points at once: each is a `cadre` process that mostly waits on its model's 120 ms replies, so three
 * overlap on two cores without moving where the kills land (each fires on what its own store shows).
 */
const AT_ONCE = 3;

/** Starts `cadre ask` in its own process and SIGKILLs it when the trigger fires (or lets it finish). */
async function askAndKill(
  { server, env }: Awaited<ReturnType<typeof fixture>>,
  trigger: Trigger,
): Promise<{ killed: boolean }> {
  const child = spawn(process.execPath, [CLI_ENTRY, 'ask', QUESTION], {
    env: childEnv(env),
    stdio: 'ignore',
  });
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  let done = false;
  void exited.then(() => {
    done = true;
  });
  const store = storeReader(env);
  try {
    // Polling is the point here: the trigger is a state of another process's database, which sends no event.
    while (!done) {
      if (await trigger.fired(store, server.requests.length)) {
        child.kill('SIGKILL');
        await exited;
        return { killed: true };
      }
      await new Promise((resolve) => setTimeout(resolve, 3));
    }
    return { killed: false };
  } finally {
    await store.close();
  }
}

interface Outcome {
  resumed: boolean;
  duplicateRows: number;
  repeatedCommittedSteps: number;
}

/** One kill point: kill `cadre ask` there, resume the tree, and check the answer and the journal. */
async function killAndResume(trigger: Trigger, expected: string): Promise<Outcome> {
  const run = await fixture();
  const { server, home, env } = run;
  const { killed } = await askAndKill(run, trigger);
  const preKill = server.requests.map(bodyOf);
  const store = storeReader(env);
  const dbPath = join(home, 'cadre.db');
  // What the killed process secured but had not yet put in the tables (its spool) is applied by the next
  // process to open the store, as `cadre runs resume` below would.
  if (store.engine === 'sqlite') await openSqliteStore(dbPath).close();
  const committedRows = await store.rows<{ run_key: string; kind: string; key: string }>(
    'SELECT run_key, kind, key FROM journal',
  );
  const committedSteps = committedRows.filter((row) => row.kind === 'model-step').length;
  const [root] = await store.rows<{ id: string }>('SELECT id FROM runs WHERE parent_id IS NULL');
  await store.close();
  expect(root, `${trigger.label}: the root run was recorded`).toBeDefined();

  const afterKill = server.requests.length;
  const resumed = await cadreInProcess(['runs', 'resume', root!.id, '--json'], env);
  const after = storeReader(env);
  let answer: string;
  if (resumed.code === 0) {
    answer = JSON.parse(resumed.stdout).answer;
  } else {
    // Killed after the tree had already ended: nothing to resume, the answer is in the session.
    expect(resumed.stderr, trigger.label).toMatch(/only an interrupted run/);
    const [message] = await after.rows<{ content: string }>(
      "SELECT content FROM messages WHERE role = 'assistant'",
    );
    answer = message!.content;
  }
  expect(answer, trigger.label).toBe(expected);

  if (after.engine === 'sqlite') {
    const db = new DatabaseSync(dbPath, { readOnly: true });
    const integrity = db.prepare('PRAGMA integrity_check').get() as { integrity_check: string };
    expect(integrity.integrity_check).toBe('ok');
    db.close();
  }
  const roles = (await after.rows<{ role: string }>('SELECT role FROM messages ORDER BY seq')).map(
    (row) => row.role,
  );
  expect(roles, trigger.label).toEqual(['user', 'assistant']);
  const rows = await after.rows<Record<string, string>>('SELECT run_key, kind, key FROM journal');
  await after.close();
  const keys = rows.map((row) => `${row.run_key}|${row.kind}|${row.key}`);
  for (const row of committedRows) {
    expect(
      keys.filter((key) => key === `${row.run_key}|${row.kind}|${row.key}`),
      trigger.label,
    ).toHaveLength(1);
  }

  // A step committed before the kill is never asked for again; only the one in flight may be.
  const postResume = server.requests.slice(afterKill).map(bodyOf);
  const repeats = postResume.filter((body) => preKill.includes(body)).length;
  const inFlight = preKill.length - committedSteps;
  if (!killed) expect(postResume).toEqual([]);
  return {
    resumed: resumed.code === 0,
    duplicateRows: keys.length - new Set(keys).size,
    repeatedCommittedSteps: Math.max(0, repeats - inFlight),
  };
}

it('SIGKILL at 22 points, then cadre runs resume: same answer, nothing lost, nothing done twice', async () => {
  // The uninterrupted answer.
  const reference = await cadreInProcess(['ask', '--json', QUESTION], (await fixture()).env);
  expect(reference.code).toBe(0);
  const expected = JSON.parse(reference.stdout).answer as string;
  expect(expected).toBe('The answers are 391 and 551.');

  const outcomes: Outcome[] = [];
  const waiting = [...triggers];
  await Promise.all(
    Array.from({ length: AT_ONCE }, async () => {
      for (let trigger = waiting.shift(); trigger; trigger = waiting.shift())
        outcomes.push(await killAndResume(trigger, expected));
    }),
  );
  const figures = {
    killPoints: outcomes.length,
    resumed: outcomes.filter((outcome) => outcome.resumed).length,
    finishedBeforeKill: outcomes.filter((outcome) => !outcome.resumed).length,
    duplicateRows: outcomes.reduce((sum, outcome) => sum + outcome.duplicateRows, 0),
    repeatedCommittedSteps: outcomes.reduce((sum, outcome) => sum + outcome.repeatedCommittedSteps, 0),
  };
  console.log(
    `kill/resume figures: ${figures.killPoints} kill points, ${figures.resumed} resumed, ` +
      `${figures.finishedBeforeKill} finished before the kill landed, ${figures.duplicateRows} duplicate journal rows, ` +
      `${figures.repeatedCommittedSteps} repeated requests for committed steps`,
  );
  expect(figures.killPoints).toBeGreaterThanOrEqual(20);
  expect(figures.duplicateRows).toBe(0);
  expect(figures.repeatedCommittedSteps).toBe(0);
  expect(figures.resumed).toBeGreaterThanOrEqual(15);
}, 600_000);
