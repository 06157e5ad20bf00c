/**
 * The chat list (issue 33, item 10), in real Chromium against a real `cadre serve`: chats grouped by
 * date, titles given the whole row (the actions show on hover or focus), a mark on chats still answering,
 * and a chat asked in another tab appearing live (one server-sent stream of changes per page).
 */
import { describe, expect, it } from 'vitest';
import { hasChromium } from '../web/browser.ts';
import { ask, expectNoConsoleErrors, screenshots, setup } from '../web/web-app-setup.ts';

describe.skipIf(!hasChromium)('the chat list', () => {
  it('shows a chat asked in another tab live, marked while it answers, grouped under Today', async () => {
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const { page, browser, server } = await setup(({ body }) =>
      JSON.stringify(body.messages).includes('Herons')
        ? { text: 'Herons wait.', until: held }
        : { text: 'Owls hunt.' },
    );
    await ask(page, 'Owls at night');
    await page.getByText('Owls hunt.').waitFor({ timeout: 20_000 });
    const chats = page.getByRole('navigation', { name: 'Chats' });
    const today = chats.getByRole('region', { name: 'Today' });
    await today.getByRole('link', { name: /Owls at night/ }).waitFor({ timeout: 10_000 });

    // Another tab asks a question: this page lists it at once, marked as answering, with no reload.
    const other = await browser.context.newPage();
    await other.goto(server.url);
    await ask(other, 'Herons by day');
    const heron = today.getByRole('link', { name: /Herons by day/ });
    await heron.waitFor({ timeout: 10_000 });
    await heron.getByRole('img', { name: 'answering' }).waitFor({ timeout: 10_000 });
    await screenshots(page, '33-10-chat-list-answering');
    release();
    await heron.getByRole('img', { name: 'answering' }).waitFor({ state: 'detached', timeout: 10_000 });

    // The title has the row: the actions of a chat not pointed at take no room, and show on hover.
    const row = chats.getByRole('listitem').filter({ hasText: 'Herons by day' });
    const deleteButton = row.getByRole('button', { name: /^Delete chat Herons by day/ });
    await page.mouse.move(900, 500);
    expect((await deleteButton.boundingBox())?.width ?? 0).toBeLessThanOrEqual(1);
    await row.hover();
    expect((await deleteButton.boundingBox())?.width ?? 0).toBeGreaterThan(10);
    await other.close();
    expectNoConsoleErrors(browser);
  }, 90_000);
});
