/**
 * What a person does with the messages of a chat (issue 26): copy an answer or a code block, edit a
 * question and send it again in its place, write the last answer again, and retry a failed answer in
 * place; then what they do with a whole chat: rename it, export it, and see what it cost. Real Chromium
 * against a real `cadre serve`; each view saved at 1280 and 375 px, light and dark (see screenshots).
 */
import { describe, expect, it } from 'vitest';
import { contentText } from '../fixtures/openai-server.ts';
import { hasChromium } from '../web/browser.ts';
import { ask, expectNoConsoleErrors, isMain, screenshots, setup } from '../web/web-app-setup.ts';

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
});
