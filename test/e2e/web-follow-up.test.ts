/**
 * Following up a finished sub-agent from its card (issue 35, item 3): "Ask math a follow-up" on math's
 * card sends the person's message to that run, which goes on from its own conversation as a new turn of
 * the chat, shown live with its own card; the main agent reads the exchange on its next turn. Real
 * Chromium against a real `cadre serve` (runs as jobs with CADRE_TEST_MODE=postgres); each view saved at
 * 1280 and 375 px, light and dark.
 */
import { describe, expect, it } from 'vitest';
import { contentText } from '../fixtures/openai-server.ts';
import { hasChromium } from '../web/browser.ts';
import { ask, expectNoConsoleErrors, isMain, isMath, screenshots, setup } from '../web/web-app-setup.ts';

describe.skipIf(!hasChromium)('following up a finished sub-agent from its card', () => {
  it('asks math a follow-up from its card: a new turn answered by math from its own conversation', async () => {
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const { page, browser, model } = await setup(({ body, system }) => {
      const said = body.messages.map((message) => contentText(message.content)).join('\n');
      if (isMain(system)) {
        if (said.includes('What did math say last?'))
          return {
            text: said.includes('[The sub-agent math answered the person') ? 'Math said 782.' : 'No idea.',
          };
        return body.messages.some((message) => message.role === 'tool')
          ? { text: 'Main: 17 × 23 is 391.' }
          : { toolCalls: [{ name: 'math', arguments: { task: 'Compute 17 * 23.' } }] };
      }
      if (isMath(system)) {
        if (!said.includes('Now double it.')) return { text: '17 * 23 = 391' };
        // Held until the page has shown the follow-up running in its own card.
        return { until: held, text: said.includes('17 * 23 = 391') ? 'Doubled: 782' : 'Double what?' };
      }
      return { status: 400 };
    });
    await ask(page, 'What is 17 * 23?');
    await page.getByText('Main: 17 × 23 is 391.').waitFor();
    const card = page.getByRole('region', { name: 'math run' }).first();
    await card.getByRole('button', { name: /^math: done\./ }).click();
    await card.getByRole('button', { name: 'Ask math a follow-up' }).click();
    await card.getByRole('textbox', { name: 'Follow-up to math' }).fill('Now double it.');
    await screenshots(page, 'follow-up-typed');
    await card.getByRole('button', { name: 'Ask', exact: true }).click();

    // The question is the chat's new turn, marked as asked of math; math's own run shows it live.
    await page.getByText('Follow-up to math').waitFor();
    const running = page.getByRole('button', { name: /^math: running\. Now double it\./ });
    await running.waitFor({ timeout: 15_000 });
    await screenshots(page, 'follow-up-running');
    release();
    await page.getByRole('button', { name: /^math: done\. Now double it\./ }).waitFor({ timeout: 15_000 });
    await page.getByRole('article', { name: 'Answer' }).last().getByText('Doubled: 782').first().waitFor();
    await screenshots(page, 'follow-up-answered');
    // Math was asked once, going on from its own conversation.
    const followUps = model.requests.filter(
      (request) => isMath(request.system) && JSON.stringify(request.body.messages).includes('Now double it.'),
    );
    expect(followUps).toHaveLength(1);
    expect(JSON.stringify(followUps[0]!.body.messages)).toContain('17 * 23 = 391');

    // Kept across a reload; the main agent reads the exchange on its next turn.
    await page.reload();
    await page.getByText('Follow-up to math').waitFor();
    await ask(page, 'What did math say last?');
    await page.getByText('Math said 782.').waitFor({ timeout: 15_000 });
    expectNoConsoleErrors(browser);
  }, 120_000);
});
