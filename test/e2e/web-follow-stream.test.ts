/**
 * Following an answer as it streams (issue 33, items 1 and 2), in real Chromium against a real `cadre
 * serve`: the view stays at the newest line while code blocks and tables arrive, lets go only when the
 * person scrolls up themselves, follows again from "Jump to latest"; and Esc stops the answer only from
 * the message box or the conversation, never from an input that uses Esc for itself.
 */
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { hasChromium } from '../web/browser.ts';
import { ask, expectNoConsoleErrors, screenshots, setup } from '../web/web-app-setup.ts';

/** A long answer of the kinds that broke following: paragraphs, tables and code blocks, about 9 KB. */
function longAnswer(sections: number): string {
  const parts: string[] = [];
  for (let index = 1; index <= sections; index++) {
    parts.push(`## Part ${index}`, '', `Paragraph ${index} explains what the table and the code below show.`);
    parts.push('', '| step | value | note |', '|---|---|---|');
    for (let row = 1; row <= 5; row++)
      parts.push(`| ${row} | ${row * index} | row ${row} of part ${index} |`);
    parts.push('', '```ts');
    for (let line = 1; line <= 6; line++)
      parts.push(`const value${line} = ${line} * ${index}; // line ${line}`);
    parts.push('```', '');
  }
  parts.push('The end of the long answer.');
  return parts.join('\n');
}

/** Samples, every frame until stopped, the gap below the view and whether "Jump to latest" shows. */
async function startSampling(page: Page) {
  await page.evaluate(() => {
    const state = { gaps: [] as number[], jumpShown: 0, running: true };
    (window as unknown as { __follow: typeof state }).__follow = state;
    const frame = () => {
      const scroller = document.querySelector('.messages');
      if (scroller) {
        state.gaps.push(scroller.scrollHeight - scroller.scrollTop - scroller.clientHeight);
        if (
          [...document.querySelectorAll('button')].some((button) =>
            /Jump to latest/.test(button.textContent ?? ''),
          )
        )
          state.jumpShown++;
      }
      if (state.running) requestAnimationFrame(frame);
    };
    requestAnimationFrame(frame);
  });
}

async function stopSampling(page: Page) {
  return page.evaluate(() => {
    const state = (window as unknown as { __follow: { gaps: number[]; jumpShown: number; running: boolean } })
      .__follow;
    state.running = false;
    return { gaps: state.gaps, jumpShown: state.jumpShown };
  });
}

const gapNow = (page: Page) =>
  page
    .locator('.messages')
    .evaluate((element) => element.scrollHeight - element.scrollTop - element.clientHeight);

describe.skipIf(!hasChromium)('following a streaming answer', () => {
  it('follows code blocks and tables to the end, lets go on a wheel scroll up, and follows again from Jump to latest', async () => {
    const text = longAnswer(12);
    const { page, browser } = await setup(() => ({ text, pieceDelayMs: 12 }));
    await ask(page, 'A long answer with tables and code');
    const answer = page.getByRole('article', { name: 'Answer' });
    await answer.getByText('Paragraph 1 explains').waitFor({ timeout: 20_000 });
    await startSampling(page);
    await page.getByRole('button', { name: 'Send' }).waitFor({ timeout: 60_000 });
    const untouched = await stopSampling(page);
    expect(untouched.gaps.length).toBeGreaterThan(30);
    // Nobody scrolled: the button never showed, and the view ends at the last line.
    expect(untouched.jumpShown).toBe(0);
    await expect.poll(() => gapNow(page)).toBeLessThan(2);
    await screenshots(page, '33-1-followed-to-the-end');

    // The second answer: the person scrolls up with the wheel, and the view stays where they put it.
    await ask(page, 'Again, please');
    const second = page.getByRole('article', { name: 'Answer' }).nth(1);
    await second.getByText('Paragraph 3 explains').waitFor({ timeout: 30_000 });
    await page.locator('.messages').hover();
    await page.mouse.wheel(0, -1500);
    const jump = page.getByRole('button', { name: /Jump to latest/ });
    await jump.waitFor({ timeout: 5_000 });
    const scrolledTo = await page.locator('.messages').evaluate((element) => element.scrollTop);
    await second.getByText('Paragraph 6 explains').waitFor({ timeout: 30_000 });
    expect(await page.locator('.messages').evaluate((element) => element.scrollTop)).toBe(scrolledTo);
    expect(await gapNow(page)).toBeGreaterThan(500);
    await screenshots(page, '33-1-scrolled-up');

    // Jump to latest follows again, to the end of the answer, without letting go by itself.
    await jump.click();
    await jump.waitFor({ state: 'detached', timeout: 5_000 });
    await startSampling(page);
    await page.getByRole('button', { name: 'Send' }).waitFor({ timeout: 60_000 });
    const rejoined = await stopSampling(page);
    expect(rejoined.jumpShown).toBe(0);
    await expect.poll(() => gapNow(page)).toBeLessThan(2);
    expectNoConsoleErrors(browser);
  }, 150_000);

  it('stops on Esc only from the message box or the conversation, not from the chat search', async () => {
    const text = longAnswer(30);
    const { page, browser } = await setup(({ body }) =>
      JSON.stringify(body.messages).includes('long one') ? { text, pieceDelayMs: 40 } : { text: 'Short.' },
    );
    await ask(page, 'Owls at night');
    await page
      .getByTestId('answer-announcer')
      .getByText(/Answer ready/)
      .waitFor({ timeout: 20_000 });
    await ask(page, 'Now a long one');
    const answer = page.getByRole('article', { name: 'Answer' }).nth(1);
    await answer.getByText('Paragraph 1 explains').waitFor({ timeout: 20_000 });

    const search = page
      .getByRole('navigation', { name: 'Chats' })
      .getByRole('searchbox', { name: 'Search chats' });
    const stopped = page.getByRole('alert').getByText(/^Stopped: cancelled\./);
    await search.fill('owl');
    await search.press('Escape');
    await answer.getByText('Paragraph 2 explains').waitFor({ timeout: 20_000 });
    // Still being written: Esc in the search belongs to the search.
    expect(await page.getByRole('button', { name: 'Stop', exact: true }).count()).toBe(1);
    expect(await stopped.count()).toBe(0);
    await search.fill('');

    // In the conversation, Esc stops the answer.
    await page.locator('.messages').click({ position: { x: 20, y: 20 } });
    await page.keyboard.press('Escape');
    await stopped.waitFor({ timeout: 10_000 });
    await screenshots(page, '33-2-stopped-from-the-conversation');
    expectNoConsoleErrors(browser);
  }, 120_000);
});
