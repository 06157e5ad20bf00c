/**
 * A provider's retries show (issue 33, item 15), in real Chromium against a real `cadre serve`: while the
 * main agent's model call waits to be tried again the answer says "The provider is busy, retrying 2/4…",
 * and a sub-agent's card says it on its line, each until the call goes on.
 */
import { describe, expect, it } from 'vitest';
import { hasChromium } from '../web/browser.ts';
import { ask, expectNoConsoleErrors, isMain, isMath, screenshots, setup } from '../web/web-app-setup.ts';

describe.skipIf(!hasChromium)('retries of a busy provider', () => {
  it('says the provider is busy and which attempt comes, under the answer and on a sub-agent’s card', async () => {
    const busy = { status: 529, headers: { 'retry-after': '2' } };
    let mainCalls = 0;
    let mathCalls = 0;
    const { page, browser } = await setup(({ body, system }) => {
      if (isMain(system)) {
        mainCalls++;
        if (mainCalls === 1) return busy;
        if (body.messages.at(-1)?.role === 'user')
          return { toolCalls: [{ name: 'math', arguments: { task: 'Add 2 and 3.' } }] };
        return { text: 'It is 5.' };
      }
      if (isMath(system)) {
        mathCalls++;
        return mathCalls === 1 ? busy : { text: '5' };
      }
      return { status: 400 };
    });
    await ask(page, 'What is 2 + 3?');
    const answer = page.getByRole('article', { name: 'Answer' });
    const mainNote = answer.getByRole('status').filter({ hasText: 'The provider is busy, retrying 2/4' });
    await mainNote.waitFor({ timeout: 20_000 });
    await screenshots(page, '33-15-retrying-main');
    // The card of the sub-agent whose call waits says so on its line.
    const card = answer.getByRole('button', { name: /^math: running\./ });
    await card.getByText('the provider is busy, retrying 2/4').waitFor({ timeout: 20_000 });
    expect(await mainNote.count()).toBe(0);
    await screenshots(page, '33-15-retrying-sub-agent');
    await answer.getByText('It is 5.').waitFor({ timeout: 20_000 });
    expect(await answer.getByText(/the provider is busy/i).count()).toBe(0);
    expectNoConsoleErrors(browser);
  }, 60_000);
});
