/**
 * Chat basics of issue 33 (items 11, 12, 16, 18), in real Chromium against a real `cadre serve`: the
 * message box grows with wrapped text and its placeholders fit a phone; the tab title follows the chat and
 * says when an approval waits; an answer that failed before any model answered shows no "0 tokens"; an
 * answer that delegated says "used sub-agents".
 */
import { describe, expect, it } from 'vitest';
import { hasChromium } from '../web/browser.ts';
import { ask, delegation, expectNoConsoleErrors, screenshots, setup } from '../web/web-app-setup.ts';

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
    await page.getByRole('button', { name: 'Stop' }).waitFor();
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
});
