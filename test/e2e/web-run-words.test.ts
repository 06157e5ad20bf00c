/**
 * Every state of every run and tool call reads as words (issue 33, item 3), in real Chromium against a
 * real `cadre serve`: delegations queued past `maxConcurrency`, a delegation refused with its reason, the
 * main agent's own calls as plain text with their result, a command waiting for approval shown whole and
 * unescaped, and the person's decision said on the call.
 */
import { describe, expect, it } from 'vitest';
import { hasChromium } from '../web/browser.ts';
import { ask, expectNoConsoleErrors, isMain, isMath, screenshots, setup } from '../web/web-app-setup.ts';

describe.skipIf(!hasChromium)('runs and tool calls in words', () => {
  it('says which delegations are queued, why one was refused, and shows the main agent’s own call as plain text', async () => {
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const { page, browser } = await setup(
      ({ body, system }) => {
        const last = body.messages.at(-1);
        if (isMain(system)) {
          if (last?.role === 'user')
            return {
              toolCalls: [
                { name: 'calculate', arguments: { expression: '1234 * 284.3' } },
                { name: 'math', arguments: { task: 'Sum A: add 1 and 2.' } },
                { name: 'math', arguments: { task: 'Sum B: add 3 and 4.' } },
                { name: 'math', arguments: { task: 'Sum C: add 5 and 6.' } },
                { name: 'research', arguments: { task: 'Look up who first added numbers.' } },
              ],
            };
          return { text: 'All three sums are in.' };
        }
        // Whichever sum starts first holds its place until the test has looked (runs as jobs, on
        // PostgreSQL, the three need not start in the order they were asked).
        if (isMath(system)) return { text: 'Done.', until: held };
        return { status: 400 };
      },
      { config: { limits: { maxConcurrency: 1 }, agents: { research: { enabled: false } } } },
    );
    await ask(page, 'Three sums, please');
    const answer = page.getByRole('article', { name: 'Answer' });
    await page.getByRole('button', { name: /^math: running\. Sum [ABC]/ }).waitFor({ timeout: 20_000 });
    // The two waiting for a free place say so, with no spinner that reads "running".
    const queued = answer.getByText('queued: starts when one of the sub-agents running now ends');
    await expect.poll(() => queued.count(), { timeout: 10_000 }).toBe(2);
    expect(await answer.getByRole('img', { name: 'math: queued' }).count()).toBe(2);
    // The refused delegation says why, on its own line.
    const refused = answer.getByText(/^refused because "research" is not a tool this agent may use/);
    await refused.waitFor({ timeout: 10_000 });
    // The main agent's own call: its input as written and its result in plain notation, no JSON.
    const calculation = answer.locator('.tool-call').filter({ hasText: 'calculate' });
    await calculation.getByText('→ 350826.2').waitFor();
    expect(await calculation.locator('summary').textContent()).not.toContain('{');
    await screenshots(page, '33-3-queued-and-refused');

    release();
    await answer.getByText('All three sums are in.').waitFor({ timeout: 20_000 });
    expect(await queued.count()).toBe(0);
    await expect.poll(() => answer.getByRole('button', { name: /^math: done\./ }).count()).toBe(3);
    // Opened, the refused call shows its reason in full.
    await answer.locator('.tool-call').filter({ hasText: 'research' }).locator('summary').click();
    await answer.getByText('Refused', { exact: true }).waitFor();
    await screenshots(page, '33-3-ended');
    expectNoConsoleErrors(browser);
  }, 90_000);

  it('shows a call waiting for approval whole and unescaped, and the denial on the call', async () => {
    // What a person must read exactly: quotes, a backslash, a newline, far more than 90 characters.
    const expression = [
      `concat("a \\"quoted\\" word", 'and a backslash \\ kept') /* this line is long on purpose: past ninety characters */`,
      '+ 1',
    ].join('\n');
    const { page, browser } = await setup(
      ({ body, system }) => {
        const last = body.messages.at(-1);
        if (isMain(system))
          return last?.role === 'user'
            ? { toolCalls: [{ name: 'calculate', arguments: { expression } }] }
            : { text: 'The calculation was not run.' };
        return { status: 400 };
      },
      { config: { approvals: { ask: ['calculate'] } } },
    );
    await ask(page, 'Calculate something odd');
    const prompts = page.getByRole('region', { name: 'Waiting for your approval' });
    await prompts.getByText('wants to run').waitFor({ timeout: 20_000 });
    const shown = prompts.getByRole('definition').locator('pre');
    expect(await shown.textContent()).toBe(expression);
    // The call in the answer says what it waits for.
    const answer = page.getByRole('article', { name: 'Answer' });
    await answer.getByText('waiting for your approval').waitFor();
    await screenshots(page, '33-3-approval-whole-input');
    await prompts.getByRole('button', { name: 'Deny calculate for main' }).click();
    await answer.getByText('The calculation was not run.').waitFor({ timeout: 20_000 });
    await answer.getByText(/^denied by you/).waitFor();
    await screenshots(page, '33-3-denied');
    expectNoConsoleErrors(browser);
  }, 90_000);
});
