/**
 * Versions instead of loss (issue 33, item 7): Regenerate and Edit keep the earlier answers as versions,
 * `< 1/2 >` on the answer steps through them, each with its own run cards and its own "Inspect runs", and
 * a reload shows them again from the server. Real Chromium against a real `cadre serve`; each view saved
 * at 1280 and 375 px, light and dark.
 */
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { contentText, type FixtureScript } from '../fixtures/openai-server.ts';
import { hasChromium } from '../web/browser.ts';
import { ask, expectNoConsoleErrors, isMain, isMath, screenshots, setup } from '../web/web-app-setup.ts';

/** The first answer delegates to math; the regenerated one answers alone; an edited question about owls. */
function script(): FixtureScript {
  let asked = 0;
  return ({ body, system }) => {
    const fromUser = body.messages.at(-1)?.role === 'user';
    if (isMath(system))
      return fromUser
        ? { toolCalls: [{ name: 'calculate', arguments: { expression: '17 * 23' } }] }
        : { text: '17 × 23 = 391' };
    if (!isMain(system)) return { status: 400 };
    if (!fromUser) return { text: 'First take: math says 391.' };
    asked += 1;
    const question = contentText(body.messages.filter((message) => message.role === 'user').at(-1)?.content);
    if (question.includes('owls')) return { text: 'Owls hunt at night.' };
    if (asked === 1) return { toolCalls: [{ name: 'math', arguments: { task: 'Compute 17 * 23.' } }] };
    return { text: 'Second take: 391, worked out alone.' };
  };
}

const versionShown = (page: Page) =>
  page.getByRole('group', { name: 'Versions of this answer' }).textContent();

describe.skipIf(!hasChromium)('versions of an answer', () => {
  it('keeps regenerated and edited answers as versions with their own run trees, after a reload too', async () => {
    const { page, browser } = await setup(script());
    const answer = page.getByRole('article', { name: 'Answer' });
    const questions = page.getByRole('article', { name: 'Your message' });
    const versions = page.getByRole('group', { name: 'Versions of this answer' });
    const mathCard = page.getByRole('button', { name: /^math: done\./ });

    await ask(page, 'What is 17 times 23?');
    await answer.getByText(/^First take/).waitFor({ timeout: 20_000 });
    await mathCard.waitFor();
    expect(await versions.count()).toBe(0);

    await answer.getByRole('button', { name: 'Regenerate answer' }).click();
    await answer.getByText(/^Second take/).waitFor({ timeout: 20_000 });
    expect(await versionShown(page)).toContain('Version 2/ of 2');
    expect(await mathCard.count()).toBe(0);

    // The earlier version: its answer and its run card, and Inspect runs opens its own tree.
    await versions.getByRole('button', { name: 'Earlier version' }).click();
    await answer.getByText(/^First take/).waitFor();
    expect(await versionShown(page)).toContain('Version 1/ of 2');
    await mathCard.waitFor();
    expect(await answer.getByRole('button', { name: 'Regenerate answer' }).count()).toBe(0);
    await screenshots(page, '33-7-earlier-version');
    await answer.getByRole('button', { name: 'Inspect runs' }).click();
    const timeline = page.getByRole('dialog', { name: 'Run timeline' });
    await timeline
      .getByText(/Compute 17 \* 23/)
      .first()
      .waitFor();
    await timeline.getByRole('button', { name: 'Close run timeline' }).click();
    await versions.getByRole('button', { name: 'Later version' }).click();
    await answer.getByText(/^Second take/).waitFor();
    await answer.getByRole('button', { name: 'Inspect runs' }).click();
    // Its own tree: the main agent alone, no math run.
    await expect.poll(() => timeline.textContent()).toMatch(/main/);
    expect(await timeline.textContent()).not.toMatch(/Compute 17 \* 23|math/);
    await timeline.getByRole('button', { name: 'Close run timeline' }).click();

    // An edit keeps the question and answer it replaced as a version too.
    await questions.getByRole('button', { name: 'Edit your message' }).click();
    const editor = questions.getByRole('textbox', { name: 'Edit your message' });
    await editor.fill('Tell me about owls');
    await editor.press('Enter');
    await answer.getByText(/^Owls hunt at night/).waitFor({ timeout: 20_000 });
    expect(await versionShown(page)).toContain('Version 3/ of 3');
    await versions.getByRole('button', { name: 'Earlier version' }).click();
    // The question shown is the one that version answered.
    await answer.getByText(/^Second take/).waitFor();
    expect(await questions.allTextContents()).toEqual([expect.stringMatching(/^What is 17 times 23\?/)]);

    // The server kept them: after a reload the current answer shows, with both earlier ones a click away.
    await page.reload();
    await answer.getByText(/^Owls hunt at night/).waitFor({ timeout: 20_000 });
    expect(await versionShown(page)).toContain('Version 3/ of 3');
    await screenshots(page, '33-7-versions');
    await versions.getByRole('button', { name: 'Earlier version' }).click();
    await versions.getByRole('button', { name: 'Earlier version' }).click();
    await answer.getByText(/^First take/).waitFor();
    await mathCard.waitFor();
    expect(await versionShown(page)).toContain('Version 1/ of 3');
    expect(await questions.allTextContents()).toEqual([expect.stringMatching(/^What is 17 times 23\?/)]);
    await answer.getByRole('button', { name: 'Inspect runs' }).click();
    await timeline
      .getByText(/Compute 17 \* 23/)
      .first()
      .waitFor();
    await timeline.getByRole('button', { name: 'Close run timeline' }).click();

    // A new question continues from the version shown: it becomes the current one on the server.
    await ask(page, 'And owls by day?');
    await answer.getByText(/^Owls hunt at night/).waitFor({ timeout: 20_000 });
    expect(await questions.allTextContents()).toEqual([
      expect.stringMatching(/^What is 17 times 23\?/),
      expect.stringMatching(/^And owls by day\?/),
    ]);
    await answer.getByText(/^First take/).waitFor();
    await screenshots(page, '33-7-continued');
    await page.reload();
    await answer.getByText(/^Owls hunt at night/).waitFor({ timeout: 20_000 });
    await answer.getByText(/^First take/).waitFor();
    await mathCard.waitFor();
    expect(await versionShown(page)).toContain('Version 3/ of 3');
    expect(await questions.count()).toBe(2);
    expectNoConsoleErrors(browser);
  }, 120_000);
});
