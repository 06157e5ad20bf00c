/**
 * What a person does with the messages of a chat (issue 26): copy an answer or a code block, edit a
 * question and send it again in its place, write the last answer again, and retry a failed answer in
 * place; then what they do with a whole chat: rename it, export it, and see what it cost. Real Chromium
 * against a real `cadre serve`; each view saved at 1280 and 375 px, light and dark (see screenshots).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { contentText, type FixtureScript } from '../fixtures/openai-server.ts';
import { hasChromium } from '../web/browser.ts';
import {
  ask,
  expectNoConsoleErrors,
  isMain,
  isMath,
  SCREENSHOTS,
  screenshots,
  setup,
} from '../web/web-app-setup.ts';

/** The chat list as a phone shows it (opened with the menu button), light and dark. */
async function phoneListShots(page: Page, name: string) {
  await page.setViewportSize({ width: 375, height: 760 });
  const menu = page.getByRole('button', { name: 'Chats', exact: true });
  await menu.click();
  for (const colorScheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme });
    await page.screenshot({ path: join(SCREENSHOTS, `${name}-375-menu-${colorScheme}.png`) });
  }
  await menu.click();
  await page.emulateMedia({ colorScheme: 'light' });
  await page.setViewportSize({ width: 1280, height: 860 });
}

/** Main delegates to math, which calls calculate; every model call uses 1,000 tokens in and 100 out. */
const pricedDelegation: FixtureScript = ({ body, system }) => {
  const usage = { prompt_tokens: 1000, completion_tokens: 100 };
  const fromUser = body.messages.at(-1)?.role === 'user';
  if (isMain(system))
    return fromUser
      ? { toolCalls: [{ name: 'math', arguments: { task: 'Compute 17 * 23.' } }], usage }
      : { text: 'The product is 391.', usage };
  if (isMath(system))
    return fromUser
      ? { toolCalls: [{ name: 'calculate', arguments: { expression: '17 * 23' } }], usage }
      : { text: '17 × 23 = 391', usage };
  return { status: 400 };
};

describe.skipIf(!hasChromium)('the messages of a chat', () => {
  it('retries a failed answer in its place, copies answers and code, regenerates, and edits a question in place', async () => {
    let answers = 0;
    const { page, browser, server } = await setup(({ body, system }) => {
      if (!isMain(system)) return { status: 400 };
      answers += 1;
      // The first answer fails (the model refuses the request); the rest are written.
      if (answers === 1) return { status: 400 };
      const question = contentText(
        body.messages.filter((message) => message.role === 'user').at(-1)?.content,
      );
      if (question.includes('owls')) return { text: 'Owls hunt at night.' };
      return {
        text: [
          `Answer ${answers}: the product is **391**.`,
          '',
          '```ts',
          'const product = 17 * 23;',
          '```',
        ].join('\n'),
      };
    });
    await browser.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: server.url });
    const clipboard = () => page.evaluate(() => navigator.clipboard.readText());
    const questions = page.getByRole('article', { name: 'Your message' });
    const answer = page.getByRole('article', { name: 'Answer' });

    await ask(page, 'What is 17 times 23?');
    const failed = page.getByRole('alert').filter({ hasText: /This answer ended/ });
    await failed.waitFor({ timeout: 20_000 });
    await screenshots(page, '1-failed-answer');
    await failed.getByRole('button', { name: 'Retry' }).click();
    // The answer is written again in the failed one's place: the question shows once, the failure is gone.
    await answer.getByText(/^Answer 2: the product is/).waitFor({ timeout: 20_000 });
    expect(await questions.count()).toBe(1);
    expect(await answer.count()).toBe(1);
    expect(await page.getByText(/This answer ended/).count()).toBe(0);

    await answer.getByRole('button', { name: 'Copy answer' }).click();
    await answer.getByRole('button', { name: 'Copied' }).waitFor();
    expect(await clipboard()).toBe(
      'Answer 2: the product is **391**.\n\n```ts\nconst product = 17 * 23;\n```',
    );
    await answer.getByRole('button', { name: 'Copy ts code' }).click();
    await expect.poll(clipboard).toMatch(/^const product = 17 \* 23;\s*$/);
    await screenshots(page, '1-answer-actions');

    await answer.getByRole('button', { name: 'Regenerate answer' }).click();
    await answer.getByText(/^Answer 3: the product is/).waitFor({ timeout: 20_000 });
    expect(await answer.count()).toBe(1);
    expect(await page.getByText(/^Answer 2:/).count()).toBe(0);

    await questions.getByRole('button', { name: 'Edit your message' }).click();
    const editor = questions.getByRole('textbox', { name: 'Edit your message' });
    expect(await editor.inputValue()).toBe('What is 17 times 23?');
    await editor.fill('Tell me about owls');
    await screenshots(page, '1-edit-question');
    await editor.press('Enter');
    await answer.getByText(/^Owls hunt at night/).waitFor({ timeout: 20_000 });
    expect(await questions.allTextContents()).toEqual([expect.stringMatching(/^Tell me about owls/)]);
    expect(await answer.count()).toBe(1);

    // What the server kept is what the page showed: one question, its one answer.
    await page.reload();
    await answer.getByText(/^Owls hunt at night/).waitFor({ timeout: 20_000 });
    expect(await questions.allTextContents()).toEqual([expect.stringMatching(/^Tell me about owls/)]);
    expect(await answer.count()).toBe(1);
    expectNoConsoleErrors(browser);
  }, 120_000);

  it('renames a chat, exports it as Markdown and as JSON with its runs, and shows its cost beside its tokens', async () => {
    // 0.25 and 2 per million: each model call (1,000 in, 100 out) costs $0.00045; four calls, $0.0018.
    const { page, browser } = await setup(pricedDelegation, {
      config: { pricing: { 'compatible:fixture': { inputPerMillion: 0.25, outputPerMillion: 2 } } },
    });
    await ask(page, 'What is 17 times 23?');
    const answer = page.getByRole('article', { name: 'Answer' });
    await answer.getByText(/^The product is 391/).waitFor({ timeout: 20_000 });
    await answer.getByText(/^Cost: \$0\.0018$/).waitFor();
    await page.getByRole('button', { name: /^math: done\./ }).click();
    const card = page.getByRole('region', { name: 'math run' });
    // The card opens on the next frame (the run store renders once per animation frame).
    const cost = card.getByText(/^2\.2k tokens \(2000 in, 200 out\) · \$0\.0009$/);
    await cost.waitFor();
    expect(await cost.count()).toBe(1);
    await answer.getByRole('button', { name: 'Inspect runs' }).click();
    const timeline = page.getByRole('dialog', { name: 'Run timeline' });
    await timeline.getByText(/4\.4k tokens · \$0\.0018 for the tree/).waitFor();
    await screenshots(page, '8-cost');
    await timeline.getByRole('button', { name: 'Close run timeline' }).click();

    // Rename, from the chat's ⋯ button in the list.
    const chats = page.getByRole('navigation', { name: 'Chats' });
    await chats.getByRole('button', { name: 'More for chat What is 17 times 23?' }).click();
    await screenshots(page, '8-chat-actions');
    await phoneListShots(page, '8-chat-actions');
    await chats.getByRole('button', { name: 'Rename' }).click();
    const title = chats.getByRole('textbox', { name: 'New title for chat What is 17 times 23?' });
    expect(await title.evaluate((element) => element === document.activeElement)).toBe(true);
    await title.fill('Multiplication notes');
    await screenshots(page, '8-rename');
    await phoneListShots(page, '8-rename');
    await title.press('Enter');
    await chats.getByRole('link', { name: /^Multiplication notes/ }).waitFor();
    // Focus is back on the chat's ⋯ button, and the name holds after a reload.
    await expect
      .poll(() =>
        chats
          .getByRole('button', { name: 'More for chat Multiplication notes' })
          .evaluate((element) => element === document.activeElement),
      )
      .toBe(true);
    await page.reload();
    await chats.getByRole('link', { name: /^Multiplication notes/ }).waitFor({ timeout: 20_000 });

    // Export: a download named after the chat, as Markdown and as JSON with the run tree.
    const exportAs = async (format: 'Markdown' | 'JSON') => {
      await chats.getByRole('button', { name: 'More for chat Multiplication notes' }).click();
      const [download] = await Promise.all([
        page.waitForEvent('download'),
        chats.getByRole('button', { name: `Export chat Multiplication notes as ${format}` }).click(),
      ]);
      return { name: download.suggestedFilename(), text: readFileSync((await download.path())!, 'utf8') };
    };
    const markdown = await exportAs('Markdown');
    expect(markdown.name).toBe('multiplication-notes.md');
    expect(markdown.text).toMatch(/^# Multiplication notes\n/);
    expect(markdown.text).toContain('## You\n\nWhat is 17 times 23?');
    expect(markdown.text).toContain('## Cadre\n\nThe product is 391.');
    expect(markdown.text).toMatch(
      / {2}- \*\*math\*\* \(done · .+ · 2,200 tokens · 0\.0009 USD\): Compute 17 \* 23\./,
    );
    const json = await exportAs('JSON');
    expect(json.name).toBe('multiplication-notes.json');
    const exported = JSON.parse(json.text) as {
      title: string;
      messages: unknown[];
      runs: Array<{ agent: string; subtreeCost: unknown; children: Array<{ agent: string }> }>;
    };
    expect(exported).toMatchObject({
      title: 'Multiplication notes',
      runs: [
        { agent: 'main', subtreeCost: { amount: 0.0018, currency: 'USD' }, children: [{ agent: 'math' }] },
      ],
    });
    expect(exported.messages).toHaveLength(2);
    expectNoConsoleErrors(browser);
  }, 120_000);
});
