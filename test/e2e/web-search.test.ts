/**
 * Search in what chats say (issue 33, item 6), in real Chromium against a real `cadre serve`: the chat
 * list's search box finds the words of the person's messages and answers on the server (full text, only
 * the caller's own), shows the matching line, and opens the chat at that message.
 */
import { describe, expect, it } from 'vitest';
import { hasChromium } from '../web/browser.ts';
import { ask, expectNoConsoleErrors, screenshots, setup } from '../web/web-app-setup.ts';

describe.skipIf(!hasChromium)('search in what chats say', () => {
  it('finds a word of an answer, shows its line, and opens the chat at that answer', async () => {
    const filler = Array.from(
      { length: 40 },
      (_, index) => `Line ${index + 1} about nothing in particular.`,
    ).join('\n\n');
    const { page, browser } = await setup(({ body }) => {
      const asked = JSON.stringify(body.messages.filter((message) => message.role === 'user').at(-1));
      if (asked.includes('Herons by day')) return { text: 'Herons wait in shallow water.' };
      if (asked.includes('A second question about owls')) return { text: filler };
      return { text: 'Barn owls listen for voles in the grass at night.' };
    });
    await ask(page, 'Owls at night');
    await page.getByText('Barn owls listen').waitFor({ timeout: 20_000 });
    await ask(page, 'A second question about owls');
    await page.getByText('Line 40 about nothing').waitFor({ timeout: 20_000 });
    await page.getByRole('button', { name: '+ New chat' }).click();
    await ask(page, 'Herons by day');
    await page.getByText('Herons wait').waitFor({ timeout: 20_000 });

    const chats = page.getByRole('navigation', { name: 'Chats' });
    // "vole" is in no title: only the server's search of the messages finds it, as it is typed.
    await chats.getByRole('searchbox', { name: 'Search chats' }).fill('vole');
    const found = chats.getByRole('region', { name: 'In messages' });
    const result = found.getByRole('link', { name: /Owls at night/ });
    await result.waitFor({ timeout: 10_000 });
    expect(await result.textContent()).toContain('voles in the grass');
    await screenshots(page, '33-6-search-in-messages');
    await result.click();
    const answer = page.getByRole('article', { name: 'Answer' }).filter({ hasText: 'Barn owls listen' });
    await answer.waitFor({ timeout: 10_000 });
    // Opened at that answer, near the top of the view, not at the end of the chat (a long answer follows).
    await expect.poll(() => answer.evaluate((element) => element === document.activeElement)).toBe(true);
    const box = (await answer.boundingBox())!;
    expect(box.y).toBeGreaterThanOrEqual(0);
    expect(box.y).toBeLessThan(400);
    await screenshots(page, '33-6-opened-at-the-message');
    expectNoConsoleErrors(browser);
  }, 120_000);
});
