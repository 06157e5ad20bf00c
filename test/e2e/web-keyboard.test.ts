/**
 * Keys and signing out (issue 33, items 19 and 20), in real Chromium against a real `cadre serve`: a skip
 * link to the conversation, shortcuts for a new chat and the search, a `?` sheet listing them; with a
 * token, Sign out forgets it and asks again, and a refused token reads as an error.
 */
import { describe, expect, it } from 'vitest';
import { hasChromium } from '../web/browser.ts';
import { ask, expectNoConsoleErrors, screenshots, setup } from '../web/web-app-setup.ts';

describe.skipIf(!hasChromium)('keys and signing out', () => {
  it('skips to the conversation, opens a new chat and the search by keys, and lists the keys on ?', async () => {
    const { page, browser } = await setup(() => ({ text: 'Owls hunt at night.' }));
    await ask(page, 'Owls at night');
    await page.getByText('Owls hunt at night.').waitFor({ timeout: 20_000 });
    // The first Tab stop is the skip link; it takes focus to the conversation.
    // From the top of the page (as after a load without the message box's autofocus).
    await page.evaluate(() => {
      document.body.tabIndex = -1;
      document.body.focus();
      document.body.removeAttribute('tabindex');
    });
    await page.keyboard.press('Tab');
    const skip = page.getByRole('button', { name: 'Skip to the conversation' });
    expect(await skip.evaluate((element) => element === document.activeElement)).toBe(true);
    await page.keyboard.press('Enter');
    await expect.poll(() => page.evaluate(() => document.activeElement?.id)).toBe('conversation');

    // Ctrl+K: the search; Ctrl+Shift+O: a new chat.
    const search = page.getByRole('searchbox', { name: 'Search chats' });
    // The search box shows once the list has a chat.
    await search.waitFor({ timeout: 10_000 });
    await page.keyboard.press('Control+k');
    await expect.poll(() => search.evaluate((element) => element === document.activeElement)).toBe(true);
    await page.keyboard.press('Control+Shift+O');
    await page.getByText('What can Cadre find out for you?').waitFor();

    // "?" outside a text box lists the shortcuts.
    await page.locator('#conversation').focus();
    await page.keyboard.press('?');
    const sheet = page.getByRole('dialog', { name: 'Keyboard shortcuts' });
    await sheet.getByText('New chat').waitFor();
    expect(await sheet.getByRole('term').allTextContents()).toContain('Ctrl+Shift+O');
    await screenshots(page, '33-19-shortcuts');
    await page.keyboard.press('Escape');
    await sheet.waitFor({ state: 'hidden' });
    // Typed in the message box, "?" is only a character.
    await page.getByRole('textbox', { name: 'Message' }).focus();
    await page.keyboard.press('?');
    expect(await sheet.count()).toBe(0);
    expectNoConsoleErrors(browser);
  }, 90_000);

  it('signs out, asks for a token again, and says a refused token is an error', async () => {
    const token = 'web-test-token-0123456789';
    const { page, browser } = await setup(() => ({ text: 'Hello.' }), { env: { CADRE_TOKEN: token } });
    const box = page.getByLabel('Token');
    await box.fill(token);
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.getByRole('button', { name: 'Sign out' }).click();
    await box.fill('not-the-token');
    await page.getByRole('button', { name: 'Continue' }).click();
    const refused = page.getByRole('alert');
    await refused.getByText(/not accepted/).waitFor({ timeout: 10_000 });
    // In the error colour, as the page's other errors are.
    const colour = (element: Element) => getComputedStyle(element).color;
    expect(await refused.evaluate(colour)).not.toBe(
      await page.getByText('This server asks for a token').evaluate(colour),
    );
    expect(await refused.evaluate((element) => element.classList.contains('notice-error'))).toBe(true);
    await screenshots(page, '33-20-token-refused');
    await box.fill(token);
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.getByRole('button', { name: 'Sign out' }).waitFor();
    expect(browser.errors.filter((error) => !error.includes('401'))).toEqual([]);
  }, 90_000);
});
