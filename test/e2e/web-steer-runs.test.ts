/**
 * Steering one sub-agent from its card (issue 35): Stop on a running sub-agent's card ends that run alone;
 * its sibling and the main agent go on, and the main agent answers with what the stopped one had done.
 * Real Chromium against a real `cadre serve`; each view saved at 1280 and 375 px, light and dark.
 */
import { describe, expect, it } from 'vitest';
import { contentText, type RecordedRequest } from '../fixtures/openai-server.ts';
import { hasChromium } from '../web/browser.ts';
import { ask, expectNoConsoleErrors, isMain, isMath, screenshots, setup } from '../web/web-app-setup.ts';

const taskOf = (request: RecordedRequest) =>
  contentText(request.body.messages.find((message) => message.role === 'user')?.content);

describe.skipIf(!hasChromium)('steering a sub-agent from its card', () => {
  it('Stop on one running sub-agent ends it alone; the main agent goes on with its work', async () => {
    const { page, browser, model } = await setup((request) => {
      const { body, system } = request;
      const last = body.messages.at(-1);
      if (isMain(system)) {
        if (last?.role === 'user')
          return {
            toolCalls: [
              { name: 'math', arguments: { task: 'Slow: work out 6 * 7 and much more.' }, id: 'call_slow' },
              { name: 'math', arguments: { task: 'Quick: what is 2 + 2?' }, id: 'call_quick' },
            ],
          };
        const stopped = body.messages.find((message) => message.tool_call_id === 'call_slow');
        return {
          text: contentText(stopped?.content).includes('"stopped_by":"the person"')
            ? 'You stopped the slow one; it had found 6 × 7 = 42, and 2 + 2 = 4.'
            : 'unexpected',
        };
      }
      if (isMath(system)) {
        if (taskOf(request).startsWith('Quick')) return { text: '2 + 2 = 4' };
        if (last?.role !== 'tool')
          return { toolCalls: [{ name: 'calculate', arguments: { expression: '6 * 7' } }] };
        return { hang: true };
      }
      return { status: 400 };
    });
    await ask(page, 'Work on two things');
    const slowCard = page.getByRole('region', { name: 'math run' }).filter({ hasText: 'Slow:' });
    await slowCard.getByRole('button', { name: /^math: running\./ }).waitFor();
    await page.getByRole('button', { name: /^math: done\./ }).waitFor();
    // The slow one has computed and waits on its model (a server-side step that need not follow the fast
    // card's end within poll's default 1 s on a loaded machine).
    await expect
      .poll(
        () =>
          model.requests.some(
            (request) => taskOf(request).startsWith('Slow') && request.body.messages.at(-1)?.role === 'tool',
          ),
        { timeout: 20_000 },
      )
      .toBe(true);
    const stop = slowCard.getByRole('button', { name: 'Stop math' });
    expect(await stop.count()).toBe(1);
    await screenshots(page, 'steer-stop-running');
    await stop.click();
    await slowCard.getByRole('button', { name: /^math: cancelled\./ }).waitFor({ timeout: 15_000 });
    await slowCard.getByText('stopped by you').waitFor();
    await page.getByText('You stopped the slow one; it had found 6 × 7 = 42').waitFor({ timeout: 15_000 });
    // The main agent is answered, not stopped: no Stop left on any card.
    expect(await page.getByRole('button', { name: 'Stop math' }).count()).toBe(0);
    await screenshots(page, 'steer-stopped');
    await page.reload();
    await page
      .getByRole('region', { name: 'math run' })
      .filter({ hasText: 'Slow:' })
      .getByText('stopped by you')
      .waitFor();
    expectNoConsoleErrors(browser);
  }, 90_000);

  it("a message typed into a running sub-agent's card joins its next step and shows in the card", async () => {
    const said = 'Give the answer in metres.';
    let markSent: () => void = () => {};
    const sent = new Promise<void>((resolve) => {
      markSent = resolve;
    });
    const heard = (request: RecordedRequest) =>
      request.body.messages.some(
        (message) => message.role === 'user' && contentText(message.content).includes(said),
      );
    const { page, browser, model } = await setup((request) => {
      const { body, system } = request;
      const toolSteps = body.messages.filter((message) => message.role === 'tool').length;
      if (isMain(system))
        return toolSteps === 0
          ? { toolCalls: [{ name: 'math', arguments: { task: 'Measure the room.' } }] }
          : { text: 'The room is 42 m long.' };
      if (isMath(system)) {
        if (heard(request)) return { text: '42 m' };
        // Calculates on until the person's message is in its conversation: its steps after the first wait
        // until the page has sent it, then take 2 s each (math has five left: time enough for the message
        // to reach the run's process, a worker's on PostgreSQL, on a loaded machine).
        return {
          toolCalls: [{ name: 'calculate', arguments: { expression: '6 * 7' } }],
          ...(toolSteps
            ? { until: sent.then(() => new Promise((resolve) => setTimeout(resolve, 2_000))) }
            : {}),
        };
      }
      return { status: 400 };
    });
    await ask(page, 'How long is the room?');
    const header = page.getByRole('button', { name: /^math: running\./ });
    await header.click();
    const box = page.getByRole('textbox', { name: 'Message to math' });
    await box.fill(said);
    await screenshots(page, 'steer-message-typed');
    await box.press('Enter');
    // Sent (the server took it): it waits in the card until it joins the run's next step.
    await page.getByRole('list', { name: 'Your messages to math' }).getByText(said).waitFor();
    markSent();
    await page.getByText('The room is 42 m long.').waitFor({ timeout: 30_000 });
    const list = page.getByRole('list', { name: 'Your messages to math' });
    await list.getByText(said).waitFor();
    await list.getByText(/before step \d+/).waitFor();
    expect(model.requests.filter((request) => isMath(request.system) && heard(request))).toHaveLength(1);
    // The box goes with the run's end.
    expect(await page.getByRole('textbox', { name: 'Message to math' }).count()).toBe(0);
    await screenshots(page, 'steer-message-joined');
    await page.reload();
    await page.getByRole('button', { name: /^math: done\./ }).waitFor();
    await page.getByRole('list', { name: 'Your messages to math' }).getByText(said).waitFor();
    expectNoConsoleErrors(browser);
  }, 90_000);

  it('an approval says which sub-agent asks, under whom and for what, and can allow a tool for that sub-agent only', async () => {
    const { page, browser, model } = await setup(
      (request) => {
        const { body, system } = request;
        const toolSteps = body.messages.filter((message) => message.role === 'tool').length;
        if (isMain(system))
          return toolSteps === 0
            ? {
                toolCalls: [
                  { name: 'math', arguments: { task: 'Alpha: add the first sums.' } },
                  { name: 'math', arguments: { task: 'Beta: add the other sums.' } },
                ],
              }
            : { text: 'Both sums are done.' };
        if (isMath(system)) {
          const alpha = taskOf(request).startsWith('Alpha');
          if (toolSteps < 2)
            return {
              toolCalls: [
                { name: 'calculate', arguments: { expression: `${alpha ? 1 : 5} + ${toolSteps}` } },
              ],
            };
          return { text: alpha ? 'alpha done' : 'beta done' };
        }
        return { status: 400 };
      },
      { config: { approvals: { ask: ['calculate'] } } },
    );
    await ask(page, 'Two sets of sums');
    const prompts = page.getByRole('region', { name: 'Waiting for your approval' });
    const alpha = prompts.locator('.approval').filter({ hasText: 'its task: Alpha: add the first sums.' });
    const beta = prompts.locator('.approval').filter({ hasText: 'its task: Beta: add the other sums.' });
    await alpha.waitFor({ timeout: 20_000 });
    await beta.waitFor({ timeout: 20_000 });
    await alpha.getByText('main › math').waitFor();
    await screenshots(page, 'steer-approval-who');
    await alpha.getByRole('button', { name: 'Allow calculate for this sub-agent' }).click();
    // Alpha's second call is allowed as it comes; Beta still asks for each of its calls.
    await page
      .getByRole('region', { name: 'math run' })
      .filter({ hasText: 'Alpha:' })
      .getByRole('button', { name: /^math: done\./ })
      .waitFor({ timeout: 20_000 });
    expect(await beta.count()).toBe(1);
    await beta.filter({ hasText: '5 + 0' }).getByRole('button', { name: 'Allow calculate for math' }).click();
    // Its next call asks again.
    const betaNext = beta.filter({ hasText: '5 + 1' });
    await betaNext.waitFor({ timeout: 20_000 });
    await betaNext.getByRole('button', { name: 'Allow calculate for math' }).click();
    await page.getByText('Both sums are done.').waitFor({ timeout: 20_000 });
    const betaCalls = model.requests.filter(
      (request) => isMath(request.system) && taskOf(request).startsWith('Beta'),
    );
    expect(betaCalls).toHaveLength(3);
    expectNoConsoleErrors(browser);
  }, 90_000);
});
