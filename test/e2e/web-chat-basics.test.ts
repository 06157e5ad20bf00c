/**
 * Chat basics of issue 33 (items 11, 12, 16, 18), in real Chromium against a real `cadre serve`: the
 * message box grows with wrapped text and its placeholders fit a phone; the tab title follows the chat and
 * says when an approval waits; an answer that failed before any model answered shows no "0 tokens"; an
 * answer that delegated says "used sub-agents".
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { hasChromium } from '../web/browser.ts';
import { ask, delegation, expectNoConsoleErrors, isMain, screenshots, setup } from '../web/web-app-setup.ts';

describe.skipIf(!hasChromium)('chat basics', () => {
  it('grows the message box with wrapped text, and its placeholders fit a phone', async () => {
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const { page, browser } = await setup(() => ({ text: 'Done.', until: held }));
    const box = page.getByRole('textbox', { name: 'Message' });
    const height = () => box.evaluate((element) => element.getBoundingClientRect().height);
    const oneLine = await height();
    // One long line, no newline in it: it wraps, and the box grows to show it.
    await box.fill('word '.repeat(60));
    expect(await height()).toBeGreaterThan(oneLine * 1.8);
    // Very long text stops growing at a limit and scrolls inside.
    await box.fill('word '.repeat(2_000));
    expect(await height()).toBeLessThanOrEqual(260);
    await box.fill('');
    expect(await height()).toBe(oneLine);

    await page.setViewportSize({ width: 375, height: 760 });
    const fits = () =>
      box.evaluate((element) => {
        const area = element as HTMLTextAreaElement;
        const probe = area.cloneNode() as HTMLTextAreaElement;
        probe.value = area.placeholder;
        // Measured at the box's own width, out of the row's layout.
        probe.style.cssText += `;height:auto;width:${area.offsetWidth}px;position:absolute;visibility:hidden;flex:none`;
        area.parentElement!.append(probe);
        const single = probe.scrollHeight;
        probe.value = 'x';
        const line = probe.scrollHeight;
        probe.remove();
        return single <= line;
      });
    expect(await fits()).toBe(true);
    await ask(page, 'Hold on');
    await page.getByRole('button', { name: 'Stop', exact: true }).waitFor();
    expect(await box.getAttribute('placeholder')).not.toBe('Ask anything…');
    expect(await fits()).toBe(true);
    await box.fill('word '.repeat(20));
    await screenshots(page, '33-11-composer-grown');
    release();
    expectNoConsoleErrors(browser);
  }, 90_000);

  it('names the chat in the tab, says when an approval waits, and says "used sub-agents"', async () => {
    const { page, browser } = await setup(delegation(), { config: { approvals: { ask: ['calculate'] } } });
    expect(await page.title()).toBe('Cadre');
    await ask(page, 'What is 17 times 23?');
    await page.getByRole('region', { name: 'Waiting for your approval' }).getByText('wants to run').waitFor({
      timeout: 20_000,
    });
    await expect.poll(() => page.title()).toMatch(/^Approval needed · .*Cadre$/);
    await page.getByRole('button', { name: 'Allow calculate for math' }).click();
    const answer = page.getByRole('article', { name: 'Answer' });
    await answer.getByText('The product is').waitFor({ timeout: 20_000 });
    await expect.poll(() => page.title(), { timeout: 10_000 }).toBe('What is 17 times 23? · Cadre');
    await answer.getByText('used sub-agents').waitFor({ timeout: 10_000 });
    await screenshots(page, '33-12-tab-title-and-badge');
    expectNoConsoleErrors(browser);
  }, 90_000);

  it('shows no "0 tokens" under an answer that failed before any model answered', async () => {
    const { page, browser } = await setup(() => ({ status: 400 }), { config: { retry: { maxRetries: 0 } } });
    await ask(page, 'Are you there?');
    const failure = page.getByRole('alert').filter({ hasText: 'error' });
    await failure.waitFor({ timeout: 20_000 });
    const answer = page.getByRole('article', { name: 'Answer' });
    expect(await answer.getByText(/\b0 tokens\b/).count()).toBe(0);
    expect(await answer.getByText(/\$0\.00/).count()).toBe(0);
    await screenshots(page, '33-16-failed-without-zero-tokens');
    expect(browser.errors.filter((error) => !error.includes('400'))).toEqual([]);
  }, 90_000);

  it('shows attached documents as chips, on the message too, and the question carries their document ids', async () => {
    const { page, browser, model } = await setup(() => ({ text: 'I read your notes.' }));
    const folder = mkdtempSync(join(tmpdir(), 'cadre-attach-'));
    const file = join(folder, 'heron-notes.md');
    writeFileSync(file, '# Heron notes\n\nHerons wait in shallow water.\n');
    await page.getByLabel('Choose documents to attach').setInputFiles(file);
    const pending = page.getByRole('list', { name: 'Attached to your next message' });
    await pending.getByText('Heron notes').waitFor({ timeout: 20_000 });
    // A second one, dropped on the chat.
    await page.locator('.chat').evaluate((chat) => {
      const transfer = new DataTransfer();
      transfer.items.add(
        new File(['# Owl notes\n\nOwls hunt at night.\n'], 'owl-notes.md', { type: 'text/markdown' }),
      );
      chat.dispatchEvent(new DragEvent('drop', { dataTransfer: transfer, bubbles: true, cancelable: true }));
    });
    await pending.getByText('Owl notes').waitFor({ timeout: 20_000 });
    await screenshots(page, '33-9-attachments-pending');
    await ask(page, 'What do my notes say?');
    const sent = page
      .getByRole('article', { name: 'Your message' })
      .getByRole('list', { name: 'Attached documents' });
    await sent.getByText('Heron notes').waitFor({ timeout: 20_000 });
    await sent.getByText('Owl notes').waitFor();
    await page.getByText('I read your notes.').waitFor({ timeout: 20_000 });
    // Nothing lingers above the message box, and the model was told which documents to read.
    expect(await pending.count()).toBe(0);
    const asked = JSON.stringify(model.requests[0]?.body.messages);
    expect(asked).toMatch(/Heron notes\\" \(document id [^)]+\)/);
    expect(asked).toMatch(/Owl notes\\" \(document id [^)]+\)/);
    await screenshots(page, '33-9-attachments-sent');
    // After a reload the chips are still on the message.
    await page.reload();
    await page
      .getByRole('list', { name: 'Attached documents' })
      .getByText('Owl notes')
      .waitFor({ timeout: 20_000 });
    expectNoConsoleErrors(browser);
  }, 90_000);

  it('puts the copy button of a code block beside the code, never over it', async () => {
    const code = [
      '```ts',
      `const line = '${'a long line of code '.repeat(12)}';`,
      'const next = 2;',
      '```',
    ].join('\n');
    const { page, browser } = await setup(() => ({ text: `Here:\n\n${code}` }));
    await ask(page, 'Some code');
    const answer = page.getByRole('article', { name: 'Answer' });
    const copy = answer.getByRole('button', { name: 'Copy ts code' });
    await copy.waitFor({ timeout: 20_000 });
    const pre = answer.locator('pre');
    for (const width of [1280, 375]) {
      await page.setViewportSize({ width, height: 760 });
      const button = (await copy.boundingBox())!;
      const block = (await pre.boundingBox())!;
      const overlaps =
        button.x < block.x + block.width &&
        block.x < button.x + button.width &&
        button.y < block.y + block.height &&
        block.y < button.y + button.height;
      expect(overlaps).toBe(false);
    }
    await screenshots(page, '33-14-code-copy');
    expectNoConsoleErrors(browser);
  }, 90_000);

  it("counts the main agent's tokens as its step ends, before the tree ends", async () => {
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const { page, browser } = await setup(({ body, system }) => {
      const last = body.messages.at(-1);
      if (isMain(system))
        return last?.role === 'user'
          ? { toolCalls: [{ name: 'math', arguments: { task: 'Add 2 and 2.' } }] }
          : { text: 'It is 4.', until: held };
      return { text: '4' };
    });
    await ask(page, 'What is 2 + 2?');
    await page.getByRole('button', { name: /^math: done\./ }).waitFor({ timeout: 20_000 });
    const answer = page.getByRole('article', { name: 'Answer' });
    // The main agent's first step (its delegation) has ended and its final answer is still being asked
    // for: the tokens so far show now, not only when the whole tree ends.
    await answer.getByText(/^\d+ tokens so far$/).waitFor({ timeout: 10_000 });
    await screenshots(page, '33-21-tokens-so-far');
    release();
    await answer.getByText(/tokens in all$/).waitFor({ timeout: 20_000 });
    expect(await answer.getByText(/so far$/).count()).toBe(0);
    expectNoConsoleErrors(browser);
  }, 90_000);

  it('notifies, while the tab is hidden, that an approval waits and that the answer ended', async () => {
    const { page, browser } = await setup(delegation(), { config: { approvals: { ask: ['calculate'] } } });
    // A tab in the background, with notifications allowed: the browser's Notification is recorded.
    await page.addInitScript(() => {
      const shown: Array<{ title: string; body: string }> = [];
      (window as unknown as { __notifications: typeof shown }).__notifications = shown;
      Object.defineProperty(document, 'visibilityState', { get: () => 'hidden' });
      class RecordedNotification {
        static permission = 'granted';
        static requestPermission = async () => 'granted';
        constructor(title: string, options?: { body?: string }) {
          shown.push({ title, body: options?.body ?? '' });
        }
      }
      (window as unknown as { Notification: unknown }).Notification = RecordedNotification;
    });
    await page.reload();
    await ask(page, 'What is 17 times 23?');
    const shown = () =>
      page.evaluate(
        () => (window as unknown as { __notifications: Array<{ title: string }> }).__notifications,
      );
    await expect
      .poll(shown, { timeout: 20_000 })
      .toEqual([{ title: 'math wants to run calculate', body: expect.any(String) }]);
    await page.getByRole('button', { name: 'Allow calculate for math' }).click();
    await expect
      .poll(async () => (await shown()).map((note) => note.title), { timeout: 20_000 })
      .toEqual(['math wants to run calculate', 'Your answer is ready']);
    expectNoConsoleErrors(browser);
  }, 90_000);
});
