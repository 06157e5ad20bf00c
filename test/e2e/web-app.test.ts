/**
 * The web app in real Chromium against a real `cadre serve` and a local OpenAI-compatible model server:
 * what a person sees and does, found by roles and names. Screenshots go to a temporary folder (and to
 * docs/screenshots with CADRE_UPDATE_SCREENSHOTS=1, for the README).
 */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { makePdf } from '../fixtures/documents/build-fixtures.ts';
import { startOpenAIServer } from '../fixtures/openai-server.ts';
import { fixtureModelEnv, tempHome } from '../helpers/cli.ts';
import { startServe } from '../helpers/serve.ts';
import { hasChromium, openBrowser } from '../web/browser.ts';
import {
  ask,
  cleanups,
  delegation,
  expectNoConsoleErrors,
  isMain,
  isMath,
  SCREENSHOTS as KEPT_SCREENSHOTS,
  screenshots,
  setup,
  sharedChromium,
  toolNames,
} from '../web/web-app-setup.ts';

/** The README's own screenshots with CADRE_UPDATE_SCREENSHOTS=1, else where every browser test saves its. */
const SCREENSHOTS = process.env.CADRE_UPDATE_SCREENSHOTS
  ? fileURLToPath(new URL('../../docs/screenshots/', import.meta.url))
  : KEPT_SCREENSHOTS;
mkdirSync(SCREENSHOTS, { recursive: true });

describe.skipIf(!hasChromium)('the web app in Chromium', () => {
  it('shows a delegation running then done, its tool calls when expanded, and all of it again after a reload', async () => {
    const { page, browser } = await setup(delegation(1500));
    await ask(page, 'What is 17 times 23?');

    const running = page.getByRole('button', { name: /^math: running\./ });
    await running.waitFor();
    // Opened while it runs: its tool call shows as soon as it is made.
    await running.click();
    await page.getByRole('list', { name: 'math tool calls' }).getByText('calculate').waitFor();
    await page.screenshot({ path: join(SCREENSHOTS, 'live-delegation.png') });
    await page.getByRole('button', { name: /^math: / }).click();
    const done = page.getByRole('button', { name: /^math: done\. Compute 17 \* 23/ });
    await done.waitFor({ timeout: 15_000 });
    await page.getByRole('cell', { name: '391' }).waitFor();

    await done.click();
    const calls = page.getByRole('list', { name: 'math tool calls' });
    await calls.getByText('calculate').waitFor();
    await calls.getByText('calculate').click();
    await page.getByText('17 × 23 = 391', { exact: false }).first().waitFor();
    await page.screenshot({ path: join(SCREENSHOTS, 'expanded-sub-agent.png') });

    // The address names the session; a reload shows the same conversation and the same run views.
    expect(new URL(page.url()).pathname).toMatch(/^\/s\/.+/);
    await page.reload();
    const reloaded = page.getByRole('button', { name: /^math: done\./ });
    await reloaded.waitFor();
    // The card opened before the reload is open again.
    expect(await reloaded.getAttribute('aria-expanded')).toBe('true');
    await page.getByRole('list', { name: 'math tool calls' }).getByText('calculate').waitFor();
    await page.getByRole('cell', { name: '391' }).waitFor();
    await page.getByRole('navigation', { name: 'Chats' }).getByText('What is 17 times 23?').waitFor();

    // The timeline shows both runs.
    await page.getByRole('button', { name: 'Inspect runs' }).click();
    const timeline = page.getByRole('dialog', { name: 'Run timeline' });
    await timeline.getByText('2 runs', { exact: false }).waitFor();
    await timeline.getByRole('button', { name: 'Close run timeline' }).click();
    expectNoConsoleErrors(browser);
  }, 60_000);

  it('Stop cancels the whole tree and shows it cancelled, also after a reload', async () => {
    const { page, browser, model } = await setup(({ body, system }) => {
      if (isMain(system) && body.messages.at(-1)?.role === 'user')
        return { toolCalls: [{ name: 'math', arguments: { task: 'Work on this for a long time.' } }] };
      if (isMain(system)) return { text: 'unexpected' };
      return { hang: true };
    });
    await ask(page, 'Take your time');
    await page.getByRole('button', { name: /^math: running\./ }).waitFor();
    await page.getByRole('button', { name: 'Stop', exact: true }).click();
    await page.getByRole('button', { name: /^math: cancelled\./ }).waitFor({ timeout: 15_000 });
    await page.getByRole('alert').getByText('cancelled', { exact: false }).waitFor();
    await page.screenshot({ path: join(SCREENSHOTS, 'cancelled.png') });
    // The main agent was never asked to continue after the cancelled delegation.
    expect(model.requests.filter((request) => isMain(request.system))).toHaveLength(1);
    await page.reload();
    await page.getByRole('button', { name: /^math: cancelled\./ }).waitFor();
    expectNoConsoleErrors(browser);
  }, 60_000);

  it('uploads a PDF and lists it with its type and pages', async () => {
    const { page, browser } = await setup(() => ({ text: 'ok' }));
    const folder = mkdtempSync(join(tmpdir(), 'cadre-upload-'));
    const pdf = join(folder, 'field-guide.pdf');
    writeFileSync(pdf, makePdf(['Owls hunt at night.', 'Herons wait in shallow water.'], 'Field guide'));
    await page.getByRole('button', { name: 'Documents' }).click();
    const panel = page.getByRole('dialog', { name: 'Documents' });
    await panel.getByLabel('Choose files to upload').setInputFiles(pdf);
    const table = panel.getByRole('table', { name: 'Documents' });
    const row = table.getByRole('row').filter({ hasText: /field|Field guide/ });
    await row.waitFor();
    await expect(row.getByRole('cell').nth(1).textContent()).resolves.toMatch(/pdf/i);
    await expect(row.getByRole('cell').nth(2).textContent()).resolves.toBe('2');
    await panel.getByRole('searchbox', { name: 'Search documents' }).fill('herons');
    await panel.getByRole('button', { name: 'Search' }).click();
    await panel
      .getByRole('region', { name: 'Search results' })
      .getByText('shallow', { exact: false })
      .waitFor();
    await page.screenshot({ path: join(SCREENSHOTS, 'documents.png') });
    expectNoConsoleErrors(browser);
  }, 60_000);

  it('switching an agent off removes it from the next request’s tools', async () => {
    const { page, browser, model } = await setup(({ system }) => ({ text: isMain(system) ? 'Hello.' : 'x' }));
    await ask(page, 'First question');
    await page.getByText('Hello.').waitFor();
    const first = model.requests.find((request) => isMain(request.system))!;
    expect(toolNames(first)).toContain('research');

    await page.getByRole('button', { name: 'Agents' }).click();
    const panel = page.getByRole('dialog', { name: 'Agents' });
    const toggle = panel.getByRole('switch', { name: 'research enabled' });
    expect(await toggle.getAttribute('aria-checked')).toBe('true');
    await panel.getByRole('status').getByText('The last answer did not use delegation.').waitFor();
    await panel.getByRole('radio', { name: /Delegate/ }).isChecked();
    await toggle.click();
    await panel.getByRole('status').getByText('Saved research.').waitFor({ state: 'attached' });
    expect(await toggle.getAttribute('aria-checked')).toBe('false');
    // How much main thinks: an effort from the panel, saved and shown again when the panel reopens.
    await panel.getByRole('combobox', { name: 'main reasoning' }).selectOption('low');
    await panel.getByRole('status').getByText('Saved main.').waitFor({ state: 'attached' });
    await page.screenshot({ path: join(SCREENSHOTS, 'agents.png') });
    await panel.getByRole('button', { name: 'Close agents' }).click();

    await ask(page, 'Second question');
    await page.getByText('Hello.').nth(1).waitFor();
    const second = model.requests.filter((request) => isMain(request.system)).at(-1)!;
    expect(toolNames(second)).not.toContain('research');
    expect(toolNames(second)).toContain('math');
    await page.getByRole('button', { name: 'Agents' }).click();
    const reopened = page.getByRole('dialog', { name: 'Agents' });
    expect(await reopened.getByRole('combobox', { name: 'main reasoning' }).inputValue()).toBe('low');
    expectNoConsoleErrors(browser);
  }, 60_000);

  it('the Agents panel says what context each sub-agent gets and whether it runs in the background', async () => {
    const agent = (name: string, front: string) =>
      `---\nname: ${name}\ndescription: Looks things up for the main agent.\n${front}---\nLook it up.\n`;
    const { page, browser } = await setup(() => ({ text: 'x' }), {
      agents: {
        'scout.md': agent('scout', 'background: true\ncontext: fork\n'),
        'helper.md': agent('helper', 'background: allowed\ncontext: last-4\n'),
      },
    });
    await page.getByRole('button', { name: 'Agents' }).click();
    const panel = page.getByRole('dialog', { name: 'Agents' });
    const card = (name: string) =>
      panel.getByRole('listitem').filter({ has: page.getByRole('heading', { name, exact: true }) });
    await card('scout').getByText('context: fork · runs in the background', { exact: true }).waitFor();
    await card('helper').getByText('context: last-4 · may run in the background', { exact: true }).waitFor();
    await card('math').getByText('context: isolated', { exact: true }).waitFor();
    expect(
      await card('math')
        .getByText(/background/)
        .count(),
    ).toBe(0);
    await card('scout').scrollIntoViewIfNeeded();
    await screenshots(page, 'agents-background');
    expectNoConsoleErrors(browser);
  }, 60_000);

  it('delegation mode Off leaves the main agent without sub-agents from the next request on', async () => {
    const { page, browser, model } = await setup(({ system }) => ({ text: isMain(system) ? 'Hello.' : 'x' }));
    await page.getByRole('button', { name: 'Agents' }).click();
    const panel = page.getByRole('dialog', { name: 'Agents' });
    await panel.getByRole('radio', { name: /^Off/ }).check();
    await panel.getByRole('status').getByText('Delegation mode: off.').waitFor({ state: 'attached' });
    await panel.getByRole('button', { name: 'Close agents' }).click();
    await ask(page, 'A question');
    await page.getByText('Hello.').waitFor();
    const request = model.requests.filter((entry) => isMain(entry.system)).at(-1)!;
    expect(toolNames(request)).not.toContain('research');
    expect(toolNames(request)).not.toContain('math');
    expectNoConsoleErrors(browser);
  }, 60_000);

  // Followed live; or, when the resumed answer ends before the page asks for it (its stream request held
  // here until the answer is stored), read back from the stored chat.
  it.each(['live', 'after it ended'] as const)(
    'an answer cut off by the server dying shows Resume after a restart, and Resume completes it (%s)',
    async (follow) => {
      let mathCalls = 0;
      const mathAsked = Promise.withResolvers<void>();
      const resumedMath = Promise.withResolvers<void>();
      const base = delegation();
      const model = await startOpenAIServer((request) => {
        // The sub-agent's first model call never answers in time: the server is killed while it waits. Its
        // second (the resumed attempt's) is held until the test lets it go, so the page can be seen
        // following it.
        if (isMath(request.system) && request.body.messages.at(-1)?.role === 'user') {
          const call = mathCalls++;
          mathAsked.resolve();
          if (call === 0) return { ...base(request), delayMs: 60_000 };
          if (call === 1) return { ...base(request), until: resumedMath.promise };
        }
        return base(request);
      });
      cleanups.push(() => resumedMath.resolve());
      cleanups.push(() => model.close());
      const home = tempHome();
      const env = fixtureModelEnv(model, home);
      const first = await startServe(['--port', '0'], env);
      const browser = await openBrowser({ browser: await sharedChromium() });
      cleanups.push(() => browser.close());
      const { page } = browser;
      await page.goto(first.url);
      await ask(page, 'What is 17 times 23?');
      await page.getByRole('button', { name: /^math: running\./ }).waitFor({ timeout: 15_000 });
      // Killed once the sub-agent's request has reached the model (its card shows a moment before that):
      // the resumed attempt's request is then the second, answered in 1.5 s, not the first's 60 s.
      await mathAsked.promise;
      const path = new URL(page.url()).pathname;
      first.child.kill('SIGKILL');
      await first.exited;

      const second = await startServe(['--port', '0'], env);
      cleanups.push(() => {
        if (second.child.exitCode === null) second.child.kill('SIGKILL');
      });
      await page.goto(`${second.url}${path}`);
      const notice = page.getByRole('status', { name: 'Interrupted answer' });
      await notice.getByText('was interrupted: the process running it ended').waitFor();
      // What its sub-agents had done by then is listed before Resume (here: math, cut off mid-way).
      await notice
        .getByRole('list', { name: 'What its sub-agents had done' })
        .getByText(/^math interrupted: Compute 17 \* 23/)
        .waitFor();
      // The killed server's cut stream and refused connections were logged by the browser before the restart.
      browser.errors.length = 0;
      await page.screenshot({ path: join(SCREENSHOTS, 'interrupted.png') });
      const streamAnswers: number[] = [];
      if (follow === 'after it ended') {
        const sessionId = decodeURIComponent(path.split('/').at(-1)!);
        await page.route(
          '**/api/chat/*/stream',
          async (route) => {
            for (let looks = 0; looks < 400; looks++) {
              const session = (await (await fetch(`${second.url}/api/sessions/${sessionId}`)).json()) as {
                messages: Array<{ role: string }>;
              };
              if (session.messages.some((message) => message.role === 'assistant')) break;
              await new Promise((resolve) => setTimeout(resolve, 50));
            }
            // Stored a moment ago: the tree's place among the running answers is given up just after. Until
            // then a look would follow it (to its end, at once): looked at from here until there is none.
            for (let looks = 0; looks < 100; looks++) {
              const look = await fetch(`${second.url}/api/chat/${sessionId}/stream`);
              await look.text();
              if (look.status === 204) break;
              await new Promise((resolve) => setTimeout(resolve, 50));
            }
            const response = await route.fetch();
            streamAnswers.push(response.status());
            await route.fulfill({ response });
          },
          // The resume's request only: the page's own look when it is reloaded below goes straight through.
          { times: 1 },
        );
      }
      const resumed = page.waitForResponse((response) => response.url().endsWith('/resume'));
      if (follow === 'after it ended') resumedMath.resolve();
      await notice.getByRole('button', { name: 'Resume' }).click();
      // Live: the new attempt is followed as it runs, its sub-agent card included, and its answer shows
      // without a reload.
      if (follow === 'live') {
        await page.getByRole('button', { name: /^math: running\./ }).waitFor({ timeout: 20_000 });
        await page.screenshot({ path: join(SCREENSHOTS, 'resumed-live.png') });
        resumedMath.resolve();
      }
      await page
        .getByText(/^The product is/)
        .waitFor({ timeout: 20_000 })
        .catch(async (error: unknown) => {
          // What the page shows, what the server stored and said, and what the model was asked.
          await page
            .screenshot({ path: join(SCREENSHOTS, `resume-${follow}-not-shown.png`) })
            .catch(() => {});
          const sessionId = decodeURIComponent(path.split('/').at(-1)!);
          const session = await (await fetch(`${second.url}/api/sessions/${sessionId}`)).text();
          const { runId } = (await (await resumed).json()) as { runId: string };
          const tree = await (await fetch(`${second.url}/api/runs/${runId}`)).text();
          const asked = model.requests.map(
            (r) => `${isMain(r.system) ? 'main' : 'sub'}:${r.body.messages.at(-1)?.role}`,
          );
          const shown = await page
            .locator('main')
            .textContent()
            .catch(() => '');
          console.log(
            `resumed answer not shown\npage: ${shown}\nsession: ${session.slice(0, 2000)}\ntree: ${tree.slice(0, 6000)}\n` +
              `model asked: ${asked.join(' ')}\nserver: ${second.output()}`,
          );
          throw error;
        });
      // Nothing was left to follow: the page read the chat again.
      if (follow === 'after it ended') expect(streamAnswers).toEqual([204]);
      expect(await page.getByRole('status', { name: 'Interrupted answer' }).count()).toBe(0);
      // main's committed step (the delegation) was not asked again: main saw its question once.
      const mainQuestions = model.requests.filter(
        (request) => isMain(request.system) && request.body.messages.at(-1)?.role === 'user',
      );
      expect(mainQuestions).toHaveLength(1);
      await page.reload();
      await page.getByText(/^The product is/).waitFor();
      // The resumed answer is stored with its tree: its sub-agent card, usage and "Inspect runs".
      await page.getByRole('button', { name: /^math: done\./ }).waitFor();
      await page.getByRole('button', { name: 'Inspect runs' }).waitFor();
      expect(await page.getByRole('status', { name: 'Interrupted answer' }).count()).toBe(0);
      expectNoConsoleErrors(browser);
    },
    90_000,
  );

  it('fits a 375 px wide screen in the dark theme', async () => {
    const { page, browser } = await setup(delegation(), { width: 375, colorScheme: 'dark' });
    await ask(page, 'What is 17 times 23?');
    await page.getByRole('button', { name: /^math: done\./ }).click({ timeout: 15_000 });
    await page.getByRole('list', { name: 'math tool calls' }).waitFor();
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    expect(overflow).toBeLessThanOrEqual(0);
    await page.screenshot({ path: join(SCREENSHOTS, 'narrow-dark.png') });
    await page.getByRole('button', { name: 'Chats' }).click();
    await page
      .getByRole('navigation', { name: 'Chats' })
      .getByRole('button', { name: '+ New chat' })
      .waitFor();
    expectNoConsoleErrors(browser);
  }, 60_000);

  it('asks for the token when the server needs one, and keeps it in the browser', async () => {
    const token = 'web-test-token-0123456789';
    const { page, browser } = await setup(({ system }) => ({ text: isMain(system) ? 'Signed in.' : 'x' }), {
      env: { CADRE_TOKEN: token },
    });
    await page.getByRole('heading', { name: 'Sign in to Cadre' }).waitFor();
    await page.getByLabel('Token').fill('wrong-token');
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.getByRole('alert').getByText('not accepted').waitFor();
    await page.getByLabel('Token').fill(token);
    await page.getByRole('button', { name: 'Continue' }).click();
    await ask(page, 'Hello');
    await page.getByText('Signed in.').waitFor();
    await page.reload();
    await page.getByText('Signed in.').waitFor();
    expect(await page.getByRole('heading', { name: 'Sign in to Cadre' }).count()).toBe(0);
    // A token that stops being accepted (revoked, say) while the chat is open: sending asks for one again.
    await page.evaluate(() => localStorage.setItem('cadre.token', 'revoked-token'));
    await ask(page, 'Again');
    await page.getByRole('heading', { name: 'Sign in to Cadre' }).waitFor();
    await page.getByRole('alert').getByText('not accepted').waitFor();
    // The refused requests before signing in are the browser's own log lines, not the page's errors.
    expect(browser.errors.filter((error) => !error.includes('401'))).toEqual([]);
  }, 60_000);

  it('lists chats newest first, deletes one after asking, and starts a new chat', async () => {
    const { page, browser } = await setup(({ body, system }) => ({
      text: isMain(system) ? `Answer to ${JSON.stringify(body.messages.at(-1)?.content).slice(1, 20)}` : 'x',
    }));
    const chats = page.getByRole('navigation', { name: 'Chats' });
    await ask(page, 'Older question');
    await page.getByText('Answer to Older').waitFor();
    // Ended, not only shown: its stored answer moves the chat up the list, which must come before the newer
    // chat is asked (the announcer of a fresh chat is empty until an answer has gone from busy to done).
    await page.getByTestId('answer-announcer').getByText('Answer ready.').waitFor();
    await chats.getByRole('button', { name: '+ New chat' }).click();
    expect(new URL(page.url()).pathname).toBe('/');
    await ask(page, 'Newer question');
    await page.getByText('Answer to Newer').waitFor();
    // The list is read again when the answer has ended, a moment after its text shows.
    await chats.getByRole('link', { name: /Newer question/ }).waitFor();
    const titles = await chats.getByRole('link').allInnerTexts();
    expect(titles.map((title) => title.split('\n')[0])).toEqual(['Newer question', 'Older question']);

    await chats.getByRole('link', { name: /Older question/ }).click();
    await page.getByText('Answer to Older').waitFor();
    await chats.getByRole('button', { name: 'Delete chat Older question' }).click();
    await chats.getByRole('button', { name: 'Confirm deleting chat Older question' }).click();
    await page.getByRole('heading', { name: 'What can Cadre find out for you?' }).waitFor();
    // The list is fetched again after the delete: read it once it has (a loaded machine can be slower).
    await chats.getByRole('link', { name: /Older question/ }).waitFor({ state: 'detached' });
    await expect(chats.getByRole('link').allInnerTexts()).resolves.toHaveLength(1);
    expectNoConsoleErrors(browser);
  }, 60_000);

  it('with no model configured, says how to set one instead of failing on the first message', async () => {
    const { page, browser } = await setup(() => ({ text: 'never asked' }), { env: { CADRE_MODEL: '' } });
    const setupNotice = page.getByRole('region', { name: 'Set a model to start' });
    await setupNotice.getByText('No model is configured', { exact: false }).waitFor();
    await setupNotice.getByText('export CADRE_MODEL=openai:gpt-5-mini', { exact: false }).waitFor();
    expect(await page.getByRole('textbox', { name: 'Message' }).isDisabled()).toBe(true);
    await page.screenshot({ path: join(SCREENSHOTS, 'setup.png') });
    expectNoConsoleErrors(browser);
  }, 60_000);

  it('asks the person before a tool that needs approval runs, and goes on once allowed', async () => {
    const { page, browser } = await setup(delegation(), { config: { approvals: { ask: ['calculate'] } } });
    await ask(page, 'What is 17 times 23?');
    const prompts = page.getByRole('region', { name: 'Waiting for your approval' });
    await prompts.getByText('wants to run').waitFor({ timeout: 15_000 });
    await page.getByRole('button', { name: /^math: running\./ }).click();
    await page
      .getByRole('list', { name: 'math tool calls' })
      .getByText('waiting for your approval')
      .waitFor();
    await page.screenshot({ path: join(SCREENSHOTS, 'approval.png') });
    await prompts.getByRole('button', { name: 'Allow calculate for math' }).click();
    await page.getByRole('button', { name: /^math: done\./ }).waitFor({ timeout: 15_000 });
    await page.getByRole('cell', { name: '391' }).waitFor();
    expect(await prompts.count()).toBe(0);
    expectNoConsoleErrors(browser);
  }, 60_000);

  it('shows a failed answer in place, and Retry asks again', async () => {
    let providerUp = false;
    const { page, browser } = await setup(
      ({ system }) => (providerUp ? { text: isMain(system) ? 'Back again.' : 'x' } : { status: 500 }),
      { config: { retry: { maxRetries: 0 } } },
    );
    await ask(page, 'Are you there?');
    const failure = page.getByRole('alert').filter({ hasText: 'error' });
    await failure.waitFor({ timeout: 20_000 });
    providerUp = true;
    await failure.getByRole('button', { name: 'Retry' }).click();
    await page.getByText('Back again.').waitFor();
    // The provider's refusals are the browser's own log lines, not the page's errors.
    expect(browser.errors.filter((error) => !error.includes('500'))).toEqual([]);
  }, 60_000);
});
