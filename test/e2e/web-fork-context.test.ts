/**
 * `context: fork` on the page (issue 35, item 5): a forked sub-agent's card says "forked context", and stays
 * so after a reload. Real Chromium against a real `cadre serve`; saved at 1280 and 375 px, light and dark.
 */
import { describe, expect, it } from 'vitest';
import { contentText, type RecordedRequest } from '../fixtures/openai-server.ts';
import { hasChromium } from '../web/browser.ts';
import { ask, expectNoConsoleErrors, isMain, screenshots, setup } from '../web/web-app-setup.ts';

const isFork = (request: RecordedRequest) =>
  request.body.messages.some((message) => contentText(message.content).includes('You are now the sub-agent'));

describe.skipIf(!hasChromium)('a forked sub-agent on the page', () => {
  it('its card says "forked context"; an isolated sibling\'s does not', async () => {
    const { page, browser, model } = await setup(
      (request) => {
        const { body, system } = request;
        if (isFork(request)) return { text: 'From the conversation so far: the meeting is on Tuesday.' };
        if (isMain(system))
          return body.messages.at(-1)?.role === 'user'
            ? {
                toolCalls: [
                  { name: 'recap', arguments: { task: 'Recap what we settled so far.' } },
                  { name: 'math', arguments: { task: 'What is 2 + 2?' } },
                ],
              }
            : { text: 'The meeting is on Tuesday, and 2 + 2 = 4.' };
        return { text: '2 + 2 = 4' };
      },
      {
        agents: {
          'recap.md':
            '---\nname: recap\ndescription: Recaps the conversation so far.\ncontext: fork\n---\nYou recap in one sentence.',
        },
      },
    );
    await ask(page, 'Recap, and add 2 and 2');
    await page.getByText('The meeting is on Tuesday, and 2 + 2 = 4.').waitFor({ timeout: 20_000 });
    const recap = page.getByRole('region', { name: 'recap run' });
    await recap.getByText('forked context').waitFor();
    expect(await page.getByRole('region', { name: 'math run' }).getByText('forked context').count()).toBe(0);
    expect(model.requests.filter(isFork)).toHaveLength(1);
    await recap.getByRole('button', { name: /^recap: done\./ }).click();
    await screenshots(page, 'fork-context');
    await page.reload();
    await page.getByRole('region', { name: 'recap run' }).getByText('forked context').waitFor();
    expectNoConsoleErrors(browser);
  }, 90_000);
});
