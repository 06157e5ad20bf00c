/**
 * A forked sub-agent run as a job on PostgreSQL whose worker is killed in the middle of its first model call:
 * another worker takes the job again, and the fork's request it sends is the same, byte for byte, as the
 * first attempt's (its conversation and prefix travel as exact text, not reordered by jsonb), so it is still
 * main's request up to the brief and a provider's prompt cache still reads it.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { contentText, type RecordedRequest, startOpenAIServer } from '../fixtures/openai-server.ts';
import { fixtureModelEnv, runCli } from '../helpers/cli.ts';
import { eventually } from '../helpers/eventually.ts';
import { freshSchema, startWorker, TEST_DATABASE_URL } from '../helpers/postgres.ts';

const isFork = (request: RecordedRequest) =>
  request.body.messages.some((message) => contentText(message.content).includes('You are now the sub-agent'));

describe.skipIf(!TEST_DATABASE_URL)('a forked sub-agent on PostgreSQL', () => {
  it("is taken again after its worker is killed, with the same request: main's prefix, byte for byte", async () => {
    let forkAnswers = false;
    const model = await startOpenAIServer((request) => {
      if (isFork(request)) return forkAnswers ? { text: 'The product 391 is right.' } : { hang: true };
      const results = request.body.messages.filter((message) => message.role === 'tool').length;
      if (results === 0) return { toolCalls: [{ name: 'calculate', arguments: { expression: '17 * 23' } }] };
      if (results === 1)
        return { toolCalls: [{ name: 'checker', arguments: { task: 'Check the product above.' } }] };
      return { text: 'Checked: 391.' };
    });
    onTestFinished(() => model.close());
    const env = { ...fixtureModelEnv(model), CADRE_DATABASE_URL: await freshSchema('fork_resume') };
    mkdirSync(join(env.CADRE_HOME, 'agents'), { recursive: true });
    writeFileSync(
      join(env.CADRE_HOME, 'agents', 'checker.md'),
      '---\nname: checker\ndescription: Checks the working so far.\ncontext: fork\n---\nYou check the working.\n',
    );
    // Two workers: the one running the fork is killed, the other takes its job again.
    const workers = [
      await startWorker(env, 'fork-a', ['--concurrency', '2']),
      await startWorker(env, 'fork-b', ['--concurrency', '2']),
    ];
    const asked = runCli(['ask', '--no-worker', '--json', 'What is 17 * 23? Have it checked.'], env);
    await eventually(async () => (model.requests.some(isFork) ? true : undefined), "the fork's first call");
    const holder = await eventually(
      async () => workers.find((worker) => /took run job \S+\n/.test(worker.output())),
      'the worker holding the fork',
    );
    forkAnswers = true;
    await holder.kill();
    const other = workers.find((worker) => worker !== holder)!;
    await other.waitFor(/took run job \S+ \(try 2\)/);

    const result = await asked;
    expect(result.code).toBe(0);
    const printed = JSON.parse(result.stdout) as {
      answer: string;
      run: { children: Array<{ agent: string; summary: string; forked?: boolean }> };
    };
    expect(printed.answer).toBe('Checked: 391.');
    expect(printed.run.children).toMatchObject([
      { agent: 'checker', forked: true, summary: 'The product 391 is right.' },
    ]);
    const forks = model.requests.filter(isFork);
    expect(forks).toHaveLength(2);
    // The second attempt sent exactly what the first did…
    expect(forks[1]!.raw).toBe(forks[0]!.raw);
    // …which is main's delegating request up to the end of its messages, then the brief.
    const delegating = model.requests.find(
      (request) => !isFork(request) && request.body.messages.filter((m) => m.role === 'tool').length === 1,
    )!;
    let same = 0;
    while (forks[0]!.raw[same] === delegating.raw[same]) same++;
    expect(delegating.raw.slice(same)).toMatch(/^\],"/);
    expect(forks[0]!.raw.slice(same)).toMatch(/^,\{"role":"user","content":"You are now the sub-agent/);
    const { messages: _, ...afterMain } = JSON.parse(delegating.raw) as Record<string, unknown>;
    const { messages: __, ...afterFork } = JSON.parse(forks[0]!.raw) as Record<string, unknown>;
    expect(JSON.stringify(afterFork)).toBe(JSON.stringify(afterMain));
  }, 120_000);
});
