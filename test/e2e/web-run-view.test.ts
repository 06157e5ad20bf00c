/**
 * The nested view of an answer kept exactly (issue 26): run cards the person opened are open again after
 * a reload, the Agents panel still says whether the last answer delegated, and the run timeline tells two
 * runs of one agent apart (task, other inputs, steps, tool calls), each row opening its run's card.
 * Real Chromium against a real `cadre serve`; each view saved at 1280 and 375 px, light and dark.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { contentText } from '../fixtures/openai-server.ts';
import { hasChromium } from '../web/browser.ts';
import { ask, expectNoConsoleErrors, isMain, isMath, screenshots, setup } from '../web/web-app-setup.ts';

const isAnalyst = (system: string) => system.includes("You are Cadre's document analyst");

describe.skipIf(!hasChromium)('the nested view of an answer', () => {
  it('keeps opened cards and the delegation indicator across a reload, and opens a run from its timeline row', async () => {
    const { page, browser } = await setup(({ body, system }) => {
      const last = body.messages.at(-1);
      if (isMain(system)) {
        if (last?.role !== 'user') return { text: 'Done: 3, 7, and owls hunt at night.' };
        const id = /\(id ([^,]+), markdown/.exec(system)?.[1] ?? 'missing';
        return {
          toolCalls: [
            { name: 'math', arguments: { task: 'Add 1 and 2.' } },
            { name: 'math', arguments: { task: 'Add 3 and 4.' } },
            { name: 'analyze_document', arguments: { document_id: id, task: 'What hunts at night?' } },
          ],
        };
      }
      if (isMath(system)) {
        const task = contentText(body.messages.find((message) => message.role === 'user')?.content);
        const [a, b] = task.includes('1 and 2') ? [1, 2] : [3, 4];
        return last?.role === 'user'
          ? { toolCalls: [{ name: 'calculate', arguments: { expression: `${a} + ${b}` } }] }
          : { text: `The sum is ${a + b}.` };
      }
      if (isAnalyst(system)) return { text: 'Owls hunt at night (page 1).' };
      return { status: 400 };
    });
    const folder = mkdtempSync(join(tmpdir(), 'cadre-doc-'));
    const file = join(folder, 'field-notes.md');
    writeFileSync(file, '# Field notes\n\nOwls hunt at night.\n');
    await page.getByRole('button', { name: 'Documents' }).click();
    const documents = page.getByRole('dialog', { name: 'Documents' });
    await documents.getByLabel('Choose files to upload').setInputFiles(file);
    await documents.getByRole('row').filter({ hasText: 'Field notes' }).waitFor();
    await documents.getByRole('button', { name: 'Close documents' }).click();

    await ask(page, 'Two sums and my notes, please');
    const answer = page.getByRole('article', { name: 'Answer' });
    await answer.getByText(/^Done: 3, 7/).waitFor({ timeout: 30_000 });
    const first = page.getByRole('button', { name: /^math: done\. Add 1 and 2\./ });
    await first.click();
    // The page's run store re-renders cards once per animation frame: the card shows open on the next one.
    await page.getByRole('button', { name: /^math: done\. Add 1 and 2\./, expanded: true }).waitFor();
    expect(await first.getAttribute('aria-expanded')).toBe('true');

    // After a reload: the card the person opened is open, the others are not, and the Agents panel still
    // knows that the last answer delegated.
    await page.reload();
    await answer.getByText(/^Done: 3, 7/).waitFor({ timeout: 20_000 });
    expect(await first.getAttribute('aria-expanded')).toBe('true');
    const second = page.getByRole('button', { name: /^math: done\. Add 3 and 4\./ });
    expect(await second.getAttribute('aria-expanded')).toBe('false');
    await page.getByRole('list', { name: 'math tool calls' }).first().waitFor();
    await page.getByRole('button', { name: 'Agents' }).click();
    const agents = page.getByRole('dialog', { name: 'Agents' });
    await agents.getByText('The last answer used delegation.').waitFor({ timeout: 10_000 });
    await agents.getByRole('button', { name: 'Close agents' }).click();

    // The timeline: one row per run, each with its task, other inputs, steps and tool calls.
    await answer.getByRole('button', { name: 'Inspect runs' }).click();
    const timeline = page.getByRole('dialog', { name: 'Run timeline' });
    const rows = timeline.getByRole('list', { name: 'Runs' });
    const firstRow = rows.getByRole('button', { name: /^Open math run: done\. Add 1 and 2\./ });
    const secondRow = rows.getByRole('button', { name: /^Open math run: done\. Add 3 and 4\./ });
    const analysisRow = rows.getByRole('button', { name: /^Open analyze_document run: done\./ });
    expect(await firstRow.textContent()).toMatch(/Add 1 and 2\..*2 steps · 1 tool call: calculate/);
    expect(await secondRow.textContent()).toMatch(/Add 3 and 4\./);
    expect(await analysisRow.textContent()).toMatch(/What hunts at night\?document_id: \S+/);
    await screenshots(page, '2-timeline');

    // A row opens its run: the timeline closes and the run's card is open, in view and focused.
    await secondRow.click();
    await timeline.waitFor({ state: 'hidden' });
    await expect.poll(() => second.getAttribute('aria-expanded')).toBe('true');
    await expect.poll(() => second.evaluate((element) => element === document.activeElement)).toBe(true);
    await screenshots(page, '2-opened-from-timeline');

    // On a phone too: the row opens its run, and only the conversation scrolls, not the page around it.
    await page.setViewportSize({ width: 375, height: 760 });
    await answer.getByRole('button', { name: 'Inspect runs' }).click();
    await rows.getByRole('button', { name: /^Open analyze_document run: / }).click();
    const analysis = page.getByRole('button', { name: /^analyze_document: done\./ });
    await expect.poll(() => analysis.getAttribute('aria-expanded')).toBe('true');
    await expect.poll(() => analysis.evaluate((element) => element === document.activeElement)).toBe(true);
    expect(await page.evaluate(() => document.scrollingElement?.scrollTop)).toBe(0);
    await expect
      .poll(() =>
        analysis.evaluate((element) => {
          const box = element.getBoundingClientRect();
          return box.top >= 0 && box.bottom <= window.innerHeight;
        }),
      )
      .toBe(true);
    await screenshots(page, '2-opened-from-timeline-phone');
    expectNoConsoleErrors(browser);
  }, 120_000);
});
