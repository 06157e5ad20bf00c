import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.ts';
import { hasChromium } from '../web/browser.ts';
import { ask, delegation, expectNoConsoleErrors, isMain, SCREENSHOTS, setup } from '../web/web-app-setup.ts';

interface StoredSession {
  messages: Array<{ role: string; parts: Array<{ type: string; text?: string }> }>;
}

async function storedSession(url: string, sessionId: string): Promise<StoredSession> {
  return (await (await fetch(`${url}/api/sessions/${sessionId}`)).json()) as StoredSession;
}

const textOf = (message: StoredSession['messages'][number]) =>
  message.parts
    .filter((part) => part.type === 'text')
    .map((part) => part.text)
    .join('');

describe.skipIf(!hasChromium)('a running answer in the web app', () => {
  it('comes back after a reload mid-answer, live in a second tab too, and the final answer arrives without another reload', async () => {
    const { page, browser, server } = await setup(delegation(3000));
    await ask(page, 'What is 17 times 23?');
    await page.getByRole('button', { name: /^math: running\./ }).waitFor({ timeout: 15_000 });

    await page.reload();
    // Attached again: the running card and Stop, within a few seconds, and then the answer, live.
    await page.getByRole('button', { name: /^math: running\./ }).waitFor({ timeout: 5_000 });
    await page.getByRole('button', { name: 'Stop', exact: true }).waitFor({ timeout: 5_000 });
    await page.screenshot({ path: join(SCREENSHOTS, 'reattached.png') });

    const second = await browser.context.newPage();
    await second.goto(page.url());
    await second.getByRole('button', { name: /^math: running\./ }).waitFor({ timeout: 5_000 });

    for (const tab of [page, second]) {
      await tab.getByRole('button', { name: /^math: done\./ }).waitFor({ timeout: 20_000 });
      await tab.getByRole('cell', { name: '391' }).waitFor();
      await tab.getByRole('button', { name: 'Send' }).waitFor();
    }
    // The page shows one answer, once: the replay did not add a second copy.
    expect(await page.getByText(/^The product is/).count()).toBe(1);
    const sessionId = new URL(page.url()).pathname.split('/').at(-1)!;
    const stored = await storedSession(server.url, sessionId);
    expect(stored.messages.map((message) => message.role)).toEqual(['user', 'assistant']);
    expectNoConsoleErrors(browser);
  }, 90_000);

  it('a question asked while an answer is being written waits for it and is answered after it, in order', async () => {
    const { page, browser, server, model } = await setup((request) => {
      const last = request.body.messages.at(-1);
      const question = typeof last?.content === 'string' ? last.content : JSON.stringify(last?.content);
      if (isMain(request.system) && question?.includes('follow-up')) return { text: 'Second answer.' };
      return delegation(2500)(request);
    });
    await ask(page, 'What is 17 times 23?');
    await page.getByRole('button', { name: /^math: running\./ }).waitFor({ timeout: 15_000 });
    await page.reload();
    await page.getByRole('button', { name: /^math: running\./ }).waitFor({ timeout: 5_000 });
    // Asked while the first answer is still being written: it waits, visibly.
    await ask(page, 'A follow-up question');
    await page.getByText('Waiting to send').waitFor();
    await page.screenshot({ path: join(SCREENSHOTS, 'queued.png') });
    await page.getByText('Second answer.', { exact: true }).waitFor({ timeout: 30_000 });
    expect(await page.getByText('Waiting to send').count()).toBe(0);
    // The answer has ended (its stream closes once it is stored), not only shown its text.
    await page.getByRole('button', { name: 'Send' }).waitFor();

    const sessionId = new URL(page.url()).pathname.split('/').at(-1)!;
    const stored = await storedSession(server.url, sessionId);
    expect(stored.messages.map((message) => message.role)).toEqual([
      'user',
      'assistant',
      'user',
      'assistant',
    ]);
    expect(textOf(stored.messages[2]!)).toBe('A follow-up question');
    expect(textOf(stored.messages[3]!)).toBe('Second answer.');
    // The follow-up reached the model once the first answer was in its history.
    const followUp = model.requests.find((request) =>
      JSON.stringify(request.body.messages).includes('follow-up'),
    );
    expect(JSON.stringify(followUp?.body.messages)).toContain('The product is');
    expectNoConsoleErrors(browser);
  }, 90_000);

  it('a turn asked in the terminal opens with its sub-agent card, and one the terminal is still writing is followed live', async () => {
    // Each question is delegated with its own task, so the second is not answered from the first's result.
    const { page, browser, server, env } = await setup((request) => {
      const { body, system } = request;
      const last = body.messages.at(-1);
      if (isMain(system) && last?.role === 'user')
        return { toolCalls: [{ name: 'math', arguments: { task: `Work out: ${String(last.content)}` } }] };
      return delegation(6000)(request);
    });
    const done = await runCli(['ask', 'What is 17 times 23?', '--json'], env);
    expect(done.code).toBe(0);
    const { sessionId } = JSON.parse(done.stdout) as { sessionId: string };
    await page.goto(`${server.url}/s/${sessionId}`);
    const card = page.getByRole('button', { name: /^math: done\./ });
    await card.waitFor({ timeout: 10_000 });
    await card.click();
    await page.getByRole('list', { name: 'math tool calls' }).getByText('calculate').waitFor();
    await page.getByRole('button', { name: 'Inspect runs' }).waitFor();

    // A second turn, asked by `cadre ask -c` in another process, is shown while it runs and when it ends.
    const running = runCli(['ask', '-c', 'And 18 times 23?'], env);
    // Opened once the terminal has stored its question and started answering.
    for (let tries = 0; (await storedSession(server.url, sessionId)).messages.length < 3; tries++) {
      expect(tries).toBeLessThan(200);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    await page.reload();
    await page.getByRole('button', { name: /^math: running\./ }).waitFor({ timeout: 15_000 });
    await page
      .getByRole('button', { name: /^math: done\./ })
      .nth(1)
      .waitFor({ timeout: 30_000 });
    expect((await running).code).toBe(0);
    expectNoConsoleErrors(browser);
  }, 90_000);
});
