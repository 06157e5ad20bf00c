/**
 * Background sub-agents on the page (issue 35, item 4): the main agent answers while a sub-agent whose
 * definition says `background: true` still runs; its card says so, a count above the message box says how
 * many run in the background (also after a reload), and its result arrives live as a new turn the main
 * agent answers, kept after a reload; meanwhile a message typed in the box reaches the main agent at once,
 * which answers it in the same answer; Stop on its card ends it. Real Chromium against a real `cadre
 * serve`; each view saved at 1280 and 375 px, light and dark.
 */
import { describe, expect, it } from 'vitest';
import { isScout, SCOUT } from '../fixtures/background-agent.ts';
import { contentText, type FixtureScript } from '../fixtures/openai-server.ts';
import { startServe } from '../helpers/serve.ts';
import { hasChromium } from '../web/browser.ts';
import { ask, cleanups, expectNoConsoleErrors, isMain, screenshots, setup } from '../web/web-app-setup.ts';

/** Main sends scout, answers at once, then answers scout's result; scout answers once `scoutMay` settles. */
function script(scoutMay: Promise<unknown>): FixtureScript {
  return ({ body, system }) => {
    const last = body.messages.at(-1);
    if (isMain(system)) {
      const said = contentText(last?.content);
      // The person's message typed while main waits for scout: main answers it in its own turn.
      if (last?.role === 'user' && said.includes('Is scout done yet?'))
        return { text: 'Not yet: scout is still looking, I will say when it is back.' };
      if (last?.role === 'user' && !said.includes('has finished'))
        return { toolCalls: [{ name: 'scout', arguments: { task: 'Find the answer to everything.' } }] };
      if (last?.role === 'tool') return { text: 'Scout is on it; I will tell you what it finds.' };
      return {
        text: said.includes('Found 42')
          ? 'Scout found it: the answer is 42.'
          : said.includes('"stopped_by":"the person"')
            ? 'You stopped scout before it found anything.'
            : 'unexpected',
      };
    }
    if (isScout(system)) return { text: 'Found 42', until: scoutMay };
    return { status: 400 };
  };
}

function held() {
  let release: (value?: unknown) => void = () => {};
  const promise = new Promise((resolve) => {
    release = resolve;
  });
  return { promise, release };
}

describe.skipIf(!hasChromium)('background sub-agents on the page', () => {
  it('the main agent answers while scout runs; its result arrives as a new turn, also kept after a reload', async () => {
    const scout = held();
    const { page, browser } = await setup(script(scout.promise), { agents: { 'scout.md': SCOUT } });
    await ask(page, 'What is the answer?');
    await page.getByText('Scout is on it; I will tell you what it finds.').waitFor();
    const card = page.getByRole('button', { name: /^scout: running in the background\./ });
    await card.waitFor();
    const count = page.getByRole('status', { name: '1 running in the background' });
    await count.waitFor();
    await screenshots(page, 'background-running');
    // Kept across a reload: the answer is still open, the card and the count come back.
    await page.reload();
    await page.getByRole('button', { name: /^scout: running in the background\./ }).waitFor();
    await page.getByRole('status', { name: '1 running in the background' }).waitFor();

    scout.release();
    await page.getByText('Scout found it: the answer is 42.').waitFor({ timeout: 30_000 });
    await page.getByRole('note').filter({ hasText: 'scout finished in the background' }).waitFor();
    await page.getByRole('button', { name: /^scout: done, ran in the background\./ }).waitFor();
    expect(await page.getByRole('status', { name: /running in the background/ }).count()).toBe(0);
    await screenshots(page, 'background-delivered');
    await page.reload();
    await page.getByText('Scout found it: the answer is 42.').waitFor();
    await page.getByRole('note').filter({ hasText: 'scout finished in the background' }).waitFor();
    await page.getByRole('button', { name: /^scout: done, ran in the background\./ }).waitFor();
    expectNoConsoleErrors(browser);
  }, 90_000);

  it('while main waits only for scout, a message typed in the box reaches main at once; it answers it before scout ends, also kept after a reload', async () => {
    const scout = held();
    const { page, browser, model } = await setup(script(scout.promise), { agents: { 'scout.md': SCOUT } });
    await ask(page, 'What is the answer?');
    await page.getByText('Scout is on it; I will tell you what it finds.').waitFor();
    const count = page.getByRole('status', { name: '1 running in the background' });
    await count.waitFor();
    const box = page.getByRole('textbox', { name: 'Message' });
    // The box says where the message goes once main waits only for scout: that takes the server's word
    // that main's step is over, which may come well after its text (longer than poll's default 1 s).
    await expect
      .poll(() => box.getAttribute('placeholder'), { timeout: 20_000 })
      .toBe('Tell the main agent…');
    await ask(page, 'Is scout done yet?');
    const said = page
      .getByRole('article', { name: 'Answer' })
      .getByRole('blockquote', { name: 'You said to the main agent' });
    await said.filter({ hasText: 'Is scout done yet?' }).waitFor({ timeout: 30_000 });
    const reply = page.getByText('Not yet: scout is still looking, I will say when it is back.');
    await reply.waitFor({ timeout: 30_000 });
    // Scout still runs: the message was not queued behind it.
    await count.waitFor();
    expect(await page.getByRole('list', { name: 'Questions waiting for the answer to end' }).count()).toBe(0);
    expect(model.requests.filter((request) => isScout(request.system))).toHaveLength(1);
    await screenshots(page, 'background-said');
    // Reloaded while scout runs: the person's words and main's reply are there, in this order.
    await page.reload();
    await said.filter({ hasText: 'Is scout done yet?' }).waitFor();
    await reply.waitFor();
    await page.getByRole('status', { name: '1 running in the background' }).waitFor();

    scout.release();
    await page.getByText('Scout found it: the answer is 42.').waitFor({ timeout: 30_000 });
    await page.getByRole('note').filter({ hasText: 'scout finished in the background' }).waitFor();
    expect(await page.getByRole('status', { name: /running in the background/ }).count()).toBe(0);
    const inOrder = async () => {
      const text = (await page.getByRole('article', { name: 'Answer' }).textContent()) ?? '';
      const at = [
        'Scout is on it',
        'Is scout done yet?',
        'Not yet: scout is still looking',
        'scout finished in the background',
        'Scout found it',
      ].map((words) => text.indexOf(words));
      return at.every((index, i) => index >= 0 && (i === 0 || index > at[i - 1]!));
    };
    expect(await inOrder()).toBe(true);
    await page.reload();
    await page.getByText('Scout found it: the answer is 42.').waitFor();
    await said.filter({ hasText: 'Is scout done yet?' }).waitFor();
    expect(await inOrder()).toBe(true);
    // Main heard the person once, and scout's result once.
    const heard = (words: string) =>
      model.requests.filter(
        (request) =>
          isMain(request.system) && contentText(request.body.messages.at(-1)?.content).includes(words),
      );
    expect(heard('Is scout done yet?')).toHaveLength(1);
    expect(heard('Found 42')).toHaveLength(1);
    expectNoConsoleErrors(browser);
  }, 90_000);

  it("Stop on a background run's card ends it; the main agent answers that the person stopped it", async () => {
    const { page, browser } = await setup(script(new Promise(() => {})), { agents: { 'scout.md': SCOUT } });
    await ask(page, 'What is the answer?');
    await page.getByText('Scout is on it; I will tell you what it finds.').waitFor();
    await page.getByRole('button', { name: /^scout: running in the background\./ }).waitFor();
    await page.getByRole('button', { name: 'Stop scout' }).click();
    await page.getByText('You stopped scout before it found anything.').waitFor({ timeout: 30_000 });
    await page.getByRole('button', { name: /^scout: cancelled, ran in the background\./ }).waitFor();
    expect(await page.getByRole('status', { name: /running in the background/ }).count()).toBe(0);
    expectNoConsoleErrors(browser);
  }, 90_000);

  it('a server killed while scout runs in the background: after a restart the answer goes on and scout is delivered once', async () => {
    let scoutMay: Promise<unknown> = new Promise(() => {});
    const { page, server, env, model } = await setup((request) => script(scoutMay)(request), {
      agents: { 'scout.md': SCOUT },
    });
    await ask(page, 'What is the answer?');
    await page.getByText('Scout is on it; I will tell you what it finds.').waitFor();
    await page.getByRole('button', { name: /^scout: running in the background\./ }).waitFor();
    // Scout's request reached the model and waits there: the server dies. (The card says running before
    // scout asks its model, and a loaded machine may take longer than poll's default 1 s in between.)
    await expect
      .poll(() => model.requests.some((request) => isScout(request.system)), { timeout: 20_000 })
      .toBe(true);
    const path = new URL(page.url()).pathname;
    server.child.kill('SIGKILL');
    await server.exited;
    scoutMay = Promise.resolve();

    const second = await startServe(['--port', '0'], env);
    cleanups.push(() => {
      if (second.child.exitCode === null) second.child.kill('SIGKILL');
    });
    await page.goto(`${second.url}${path}`);
    // Embedded, the interrupted answer offers Resume; as jobs (PostgreSQL), the new server's worker goes on.
    const resume = page
      .getByRole('status', { name: 'Interrupted answer' })
      .getByRole('button', { name: 'Resume' });
    const delivered = page.getByText('Scout found it: the answer is 42.');
    await resume.or(delivered).first().waitFor({ timeout: 40_000 });
    if (await resume.isVisible()) await resume.click();
    await delivered.waitFor({ timeout: 40_000 });
    await page.getByRole('note').filter({ hasText: 'scout finished in the background' }).waitFor();
    const answered = model.requests.filter(
      (request) =>
        isMain(request.system) && contentText(request.body.messages.at(-1)?.content).includes('Found 42'),
    );
    expect(answered).toHaveLength(1);
  }, 120_000);
});
