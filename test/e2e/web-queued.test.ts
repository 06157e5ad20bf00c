/**
 * A question the page asks while no worker runs (PostgreSQL, `cadre serve --no-worker`): the page says it
 * is queued instead of "Starting…", and when nobody takes it within `queue.waitTimeoutSeconds` it says
 * why it was withdrawn; with a worker the next question is answered and nothing is said of a queue. A page
 * reloaded (or opened in another tab) while its question waits says it is queued too, and shows the answer
 * once a worker takes it.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { startOpenAIServer } from '../fixtures/openai-server.ts';
import { fixtureModelEnv, tempHome } from '../helpers/cli.ts';
import { freshSchema, startWorker, TEST_DATABASE_URL } from '../helpers/postgres.ts';
import { startServe } from '../helpers/serve.ts';
import { hasChromium, openBrowser } from '../web/browser.ts';
import { ask, expectNoConsoleErrors, screenshots, sharedChromium } from '../web/web-app-setup.ts';

describe.skipIf(!hasChromium || !TEST_DATABASE_URL)('a queued question on the page', () => {
  it('says it is queued, then why it was withdrawn; with a worker it is answered', async () => {
    const model = await startOpenAIServer(() => ({ text: 'Answered by a worker.' }));
    onTestFinished(() => model.close());
    const env = { ...fixtureModelEnv(model), CADRE_DATABASE_URL: await freshSchema('web_queued') };
    writeFileSync(join(env.CADRE_HOME, 'config.json'), JSON.stringify({ queue: { waitTimeoutSeconds: 8 } }));
    const server = await startServe(['--port', '0', '--no-worker'], env);
    onTestFinished(async () => {
      server.child.kill('SIGTERM');
      await server.exited;
    });
    const browser = await openBrowser({ browser: await sharedChromium() });
    onTestFinished(() => browser.close());
    const { page } = browser;
    // The page looks for an answer to attach to as it opens; a person asks once it has looked.
    const looked = page.waitForResponse((response) => /\/api\/chat\/[^/]+\/stream$/.test(response.url()));
    await page.goto(server.url);
    await looked;

    // What the conversation says, read as a person reads it.
    const conversation = () => page.getByRole('main').textContent();
    await ask(page, 'Anyone there?');
    await expect.poll(conversation, { timeout: 15_000 }).toContain('Queued: no worker has taken it yet');
    expect(await conversation()).not.toContain('Starting…');
    await expect
      .poll(() => page.getByRole('alert').allInnerTexts(), { timeout: 20_000 })
      .toContainEqual(expect.stringContaining('No worker took this question within 8 s'));
    expect(await conversation()).not.toContain('Queued: no worker has taken it yet');
    expect(model.requests).toEqual([]);

    await startWorker(env, 'late', ['--concurrency', '1']);
    await ask(page, 'And now?');
    await expect.poll(conversation, { timeout: 15_000 }).toContain('Answered by a worker.');
    expect(await conversation()).not.toContain('Queued');
    expectNoConsoleErrors(browser);
  }, 90_000);

  it('a page reloaded while its question waits says it is queued, can withdraw it, then shows the answer a worker gives', async () => {
    const model = await startOpenAIServer(() => ({ text: 'Answered once a worker came.' }));
    onTestFinished(() => model.close());
    const env = { ...fixtureModelEnv(model), CADRE_DATABASE_URL: await freshSchema('web_queued_reload') };
    writeFileSync(
      join(env.CADRE_HOME, 'config.json'),
      JSON.stringify({ queue: { waitTimeoutSeconds: 120 } }),
    );
    const server = await startServe(['--port', '0', '--no-worker'], env);
    onTestFinished(async () => {
      server.child.kill('SIGTERM');
      await server.exited;
    });
    const browser = await openBrowser({ browser: await sharedChromium() });
    onTestFinished(() => browser.close());
    const { page } = browser;
    const attachLook = () =>
      page.waitForResponse((response) => /\/api\/chat\/[^/]+\/stream$/.test(response.url()));
    const looked = attachLook();
    await page.goto(server.url);
    await looked;
    const conversation = () => page.getByRole('main').textContent();
    const queuedNotice = 'Queued: no worker has taken it yet';

    // Reloaded while it waits, then stopped: Stop withdraws the waiting question, and nothing of it runs.
    await ask(page, 'Never mind this one.');
    await expect.poll(conversation, { timeout: 15_000 }).toContain(queuedNotice);
    const reloaded = attachLook();
    await page.reload();
    await expect.poll(conversation, { timeout: 15_000 }).toContain(queuedNotice);
    await reloaded;
    await page.getByRole('button', { name: 'Stop' }).click();
    await expect
      .poll(conversation, { timeout: 15_000 })
      .toContain('Cancelled before any worker took it (stopped by the person); nothing ran.');
    expect(await conversation()).not.toContain(queuedNotice);
    // The answer has ended: the page is ready for the next question.
    await expect.poll(() => page.getByRole('button', { name: 'Stop' }).count(), { timeout: 15_000 }).toBe(0);
    await screenshots(page, 'queued-withdrawn');

    await ask(page, 'Is anyone there yet?');
    await expect.poll(conversation, { timeout: 15_000 }).toContain('Queued: no worker has taken it yet');

    // Reloaded while it waits: the page attaches to the waiting question and says so, not "Starting…".
    const reattached = attachLook();
    await page.reload();
    await expect.poll(conversation, { timeout: 15_000 }).toContain('Queued: no worker has taken it yet');
    expect((await reattached).status()).toBe(200);
    expect(await conversation()).toContain('Is anyone there yet?');
    expect(await conversation()).not.toContain('Starting…');
    await screenshots(page, 'queued-after-reload');
    expect(model.requests).toEqual([]);

    // A worker takes it: the reloaded page shows the answer as it comes, and the notice goes.
    await startWorker(env, 'late', ['--concurrency', '1']);
    await expect.poll(conversation, { timeout: 20_000 }).toContain('Answered once a worker came.');
    expect(await conversation()).not.toContain('Queued');
    // The withdrawn question never ran: one model request, for the second (the first is in its history).
    expect(model.requests).toHaveLength(1);
    expect(model.requests[0]!.body.messages.at(-1)).toEqual({
      role: 'user',
      content: 'Is anyone there yet?',
    });
    // Stored as the session's answer: it is there after one more reload.
    await page.reload();
    await expect.poll(conversation, { timeout: 15_000 }).toContain('Answered once a worker came.');
    expectNoConsoleErrors(browser);
  }, 90_000);

  it('a page served by another serve process sees the waiting question, and its Stop withdraws it', async () => {
    const model = await startOpenAIServer(() => ({ text: 'Never asked.' }));
    onTestFinished(() => model.close());
    const env = { ...fixtureModelEnv(model), CADRE_DATABASE_URL: await freshSchema('web_queued_two') };
    writeFileSync(
      join(env.CADRE_HOME, 'config.json'),
      JSON.stringify({ queue: { waitTimeoutSeconds: 120 } }),
    );
    // Two front doors on one database, no worker: the question is asked through the first.
    const doors = [
      await startServe(['--port', '0', '--no-worker'], env),
      await startServe(['--port', '0', '--no-worker'], { ...env, CADRE_HOME: tempHome() }),
    ];
    onTestFinished(async () => {
      for (const door of doors) {
        door.child.kill('SIGTERM');
        await door.exited;
      }
    });
    const chromium = await sharedChromium();
    const [asking, other] = [
      await openBrowser({ browser: chromium }),
      await openBrowser({ browser: chromium }),
    ];
    onTestFinished(async () => {
      await Promise.all([asking.close(), other.close()]);
    });
    const looked = asking.page.waitForResponse((response) =>
      /\/api\/chat\/[^/]+\/stream$/.test(response.url()),
    );
    await asking.page.goto(doors[0]!.url);
    await looked;
    const conversation = (page: typeof asking.page) => () => page.getByRole('main').textContent();
    const queuedNotice = 'Queued: no worker has taken it yet';
    await ask(asking.page, 'Withdraw me from elsewhere.');
    await expect.poll(conversation(asking.page), { timeout: 15_000 }).toContain(queuedNotice);

    // The same chat through the other door: it finds the question waiting on the queue.
    await other.page.goto(`${doors[1]!.url}${new URL(asking.page.url()).pathname}`);
    await expect.poll(conversation(other.page), { timeout: 15_000 }).toContain(queuedNotice);
    await other.page.getByRole('button', { name: 'Stop' }).click();
    const withdrawn = 'Cancelled before any worker took it (stopped by the person); nothing ran.';
    for (const { page } of [other, asking]) {
      await expect.poll(conversation(page), { timeout: 15_000 }).toContain(withdrawn);
      expect(await conversation(page)()).not.toContain(queuedNotice);
    }
    expect(model.requests).toEqual([]);
    expectNoConsoleErrors(other);
    expectNoConsoleErrors(asking);
  }, 90_000);
});
