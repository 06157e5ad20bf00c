/**
 * The main thread stays free while answers stream (issue 33, item 4): the built page in real Chromium,
 * fed by a stand-in server (test/web/mock-app.ts) at a live pace, once with eight sub-agents streaming side
 * by side (344 events) and once with a 20 KB Markdown answer (tables, code, lists). The long-task API
 * reports every task over 50 ms; there must be none while the answer streams (on this machine; set
 * CADRE_CPU_SLOWDOWN to see a slower one). Figures are printed, for the
 * closing note and for comparison across changes.
 */
import type { Page } from 'playwright-core';
import { afterEach, describe, expect, it } from 'vitest';
import { hasChromium, openBrowser } from '../web/browser.ts';
import { type MockApp, startMockApp } from '../web/mock-app.ts';
import { longAnswerStream, longMarkdown, wideTree } from '../web/ui-stream.ts';
import { isMain, isMath, SCREENSHOTS, setup } from '../web/web-app-setup.ts';

/** How much slower than this machine the page's CPU is made (Chromium's CPU throttling; 1: not at all). */
const CPU_SLOWDOWN = Number(process.env.CADRE_CPU_SLOWDOWN ?? 1);

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of closers.reverse()) await close();
  closers.length = 0;
});

/**
 * Waits for the answer to end: the Stop button has been seen (a MutationObserver set up before Enter notes
 * it) and the Send button is back. Looking four times a second with a plain DOM query: Playwright's role
 * queries, polled every frame over a large page, would be long tasks themselves. Without the first half, a
 * look taken before the page turned busy would see the Send button still there and end at once. With
 * `doneCards`, that many sub-agent cards must say done as well: on CI's fast machine a real server's answer
 * was once taken as ended while its eight cards were still running.
 */
function answerEnded(page: Page, doneCards = 0) {
  return page.waitForFunction(
    (cards) =>
      (window as unknown as { __sawBusy?: boolean }).__sawBusy === true &&
      [...document.querySelectorAll('button')].some((button) => button.textContent === 'Send') &&
      document.querySelectorAll('button[aria-label*=": done."]').length >= cards,
    doneCards,
    { polling: 250, timeout: 90_000 },
  );
}

/** Streams one answer into the page and returns every long task (ms) seen from Enter to its end. */
async function longTasksWhileStreaming(page: Page, app: MockApp | undefined, done: () => Promise<unknown>) {
  // The real server's page is open already; the stand-in's is opened here.
  if (app) await page.goto(app.url);
  // CADRE_CPU_SLOWDOWN=2 or 4 asks how a slower machine fares (Chromium's CPU throttling).
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('Emulation.setCPUThrottlingRate', { rate: CPU_SLOWDOWN });
  await page.evaluate(() => {
    const state = { tasks: [] as number[] };
    (window as unknown as { __long: typeof state }).__long = state;
    new PerformanceObserver((list) => {
      for (const entry of list.getEntries()) state.tasks.push(Math.round(entry.duration));
    }).observe({ type: 'longtask', buffered: false });
  });
  await page.evaluate(() => {
    const flag = window as unknown as { __sawBusy?: boolean };
    flag.__sawBusy = false;
    const observer = new MutationObserver(() => {
      if (document.querySelector('button.stop')) {
        flag.__sawBusy = true;
        observer.disconnect();
      }
    });
    observer.observe(document.body, { childList: true, subtree: true });
  });
  const box = page.getByRole('textbox', { name: 'Message' });
  await box.fill('Go');
  await box.press('Enter');
  await done();
  // The last frames of the answer are drawn before the figures are read.
  await page.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => setTimeout(resolve, 100))));
  return page.evaluate(() => (window as unknown as { __long: { tasks: number[] } }).__long.tasks);
}

describe.skipIf(!hasChromium)('the main thread while an answer streams', () => {
  it('has no task over 50 ms with eight sub-agents streaming side by side (344 events)', async () => {
    const app = await startMockApp({ chat: () => wideTree(8, 43).stream, chunksPerWrite: 4, pauseMs: 12 });
    closers.push(() => app.close());
    const browser = await openBrowser();
    closers.push(() => browser.close());
    const { page } = browser;
    const tasks = await longTasksWhileStreaming(page, app, () => answerEnded(page));
    await page.getByText('All parts are done.').waitFor();
    expect(await page.locator('[role="img"][aria-label="done"]').count()).toBeGreaterThanOrEqual(8);
    console.log(`eight sub-agents, 344 events: long tasks ${JSON.stringify(tasks)} ms`);
    await page.screenshot({ path: `${SCREENSHOTS}/33-4-eight-sub-agents-1280-light.png` });
    expect(Math.max(0, ...tasks)).toBeLessThanOrEqual(50);
    expect(browser.errors).toEqual([]);
  }, 120_000);

  it('has no task over 50 ms while a 20 KB Markdown answer streams', async () => {
    // One 24-character delta every 6 ms, 4 KB a second: faster than models write (so a test stays short).
    const app = await startMockApp({ chat: longAnswerStream, chunksPerWrite: 1, pauseMs: 6 });
    closers.push(() => app.close());
    const browser = await openBrowser();
    closers.push(() => browser.close());
    const { page } = browser;
    const tasks = await longTasksWhileStreaming(page, app, () => answerEnded(page));
    console.log(`20 KB answer: long tasks ${JSON.stringify(tasks)} ms`);
    const answer = page.getByRole('article', { name: 'Answer' });
    // Drawn whole and right: every section, its table and its code.
    expect(await answer.locator('h2').count()).toBe((longMarkdown().match(/^## /gm) ?? []).length);
    expect(await answer.locator('table').count()).toBe(await answer.locator('h2').count());
    expect(await answer.locator('pre').count()).toBe(await answer.locator('h2').count());
    expect(await answer.textContent()).not.toContain('**');
    await page.screenshot({ path: `${SCREENSHOTS}/33-4-long-answer-1280-light.png` });
    expect(Math.max(0, ...tasks)).toBeLessThanOrEqual(50);
    expect(browser.errors).toEqual([]);
  }, 120_000);

  // With a real `cadre serve` on the same two cores, the server's own work (eight sub-agents starting at once)
  // takes the CPU from the page: a task of the page's then lasts longer in wall time than the page made it
  // (one of 67–175 ms, at the moment the eight runs start, in runs alone on an idle machine; none in others).
  // The page's own cost is what the two cases above hold to 50 ms; this one prints its figures and holds the
  // page to a bound that still catches the stalls the issue measured (355 and 494 ms).
  it('stays responsive with eight sub-agents answering on a real server, in steps of up to 1.2 s', async () => {
    const answer = (index: number) =>
      [
        `Part ${index} is **done**: the sum is ${index * 7}.`,
        '',
        '| step | value |',
        '|---|---|',
        `| one | ${index} |`,
        `| two | ${index * 6} |`,
        '',
        '```ts',
        `const total = ${index} + ${index * 6};`,
        '```',
      ].join('\n');
    const { page, browser } = await setup(
      ({ body, system }) => {
        const last = body.messages.at(-1);
        if (isMain(system))
          return last?.role === 'user'
            ? {
                toolCalls: Array.from({ length: 8 }, (_, index) => ({
                  name: 'math',
                  arguments: { task: `Part ${index + 1}: add ${index + 1} and ${(index + 1) * 6}.` },
                })),
              }
            : { text: longMarkdown().slice(0, 6_000), pieceDelayMs: 4 };
        if (isMath(system)) {
          const index = Number(/Part (\d+)/.exec(JSON.stringify(body.messages))?.[1] ?? 1);
          const tools = body.messages.filter((message) => message.role === 'tool').length;
          if (tools < 2)
            return {
              toolCalls: [
                { name: 'calculate', arguments: { expression: `${index} + ${index * 6 + tools}` } },
              ],
              delayMs: 300 + ((index * 137) % 900),
            };
          return { text: answer(index), pieceDelayMs: 25 };
        }
        return { status: 400 };
      },
      { config: { limits: { maxConcurrency: 8, maxFanOut: 8 } } },
    );
    const tasks = await longTasksWhileStreaming(page, undefined, () => answerEnded(page, 8));
    console.log(`eight sub-agents on a real server: long tasks ${JSON.stringify(tasks)} ms`);
    await expect.poll(() => page.getByRole('button', { name: /^math: done\./ }).count()).toBe(8);
    await page.screenshot({ path: `${SCREENSHOTS}/33-4-eight-real-sub-agents-1280-light.png` });
    expect(Math.max(0, ...tasks)).toBeLessThanOrEqual(300);
    expect(browser.errors).toEqual([]);
  }, 120_000);
});
