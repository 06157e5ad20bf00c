import { afterAll, beforeAll, expect, it } from 'vitest';
import { startOpenAIServer } from '../fixtures/openai-server.ts';
import { tempHome } from '../helpers/cli.ts';
import { cadreInProcess } from '../helpers/cli-in-process.ts';
import { storeReader } from '../helpers/store-reader.ts';

/**
 * A kill between the tree's end and the session's answer (the two are separate writes): the stored tree
 * has the answer, so `cadre runs resume` completes the session from it without asking the model again.
 */
let server: Awaited<ReturnType<typeof startOpenAIServer>>;
beforeAll(async () => {
  server = await startOpenAIServer(() => ({ text: 'It is 42.' }));
});
afterAll(() => server.close());

it('completes a session whose finished tree never wrote its answer there, once', async () => {
  const home = tempHome();
  const env = {
    CADRE_HOME: home,
    CADRE_MODEL: 'compatible:fixture',
    CADRE_COMPATIBLE_BASE_URL: server.baseURL,
  };
  const asked = await cadreInProcess(['ask', '--json', 'What is 6 * 7?'], env);
  expect(asked.code).toBe(0);
  const { run, sessionId } = JSON.parse(asked.stdout) as { run: { id: string }; sessionId: string };
  // What a SIGKILL right after the tree's end leaves: the tree stored `ok`, no answer in the session.
  const store = storeReader(env);
  await store.execute("DELETE FROM messages WHERE role = 'assistant'");
  await store.close();
  const requests = server.requests.length;

  const resumed = await cadreInProcess(['runs', 'resume', run.id, '--json'], env);
  expect(resumed.code, resumed.stderr).toBe(0);
  expect(JSON.parse(resumed.stdout)).toMatchObject({ answer: 'It is 42.', status: 'ok', sessionId });
  expect(server.requests.length).toBe(requests);
  const check = storeReader(env);
  const roles = (await check.rows<{ role: string }>('SELECT role FROM messages ORDER BY seq')).map(
    (row) => row.role,
  );
  await check.close();
  expect(roles).toEqual(['user', 'assistant']);

  // Once complete, the tree is not resumed again.
  const again = await cadreInProcess(['runs', 'resume', run.id], env);
  expect(again.code).not.toBe(0);
  expect(again.stderr).toMatch(/only an interrupted run/);
});
