/**
 * LaTeX in answers (issue 33, item 5), in real Chromium against a real `cadre serve`: `$…$`, `$$…$$` and
 * `\(…\)` drawn with KaTeX, whose code, styles and fonts load only once an answer has math.
 */
import { describe, expect, it } from 'vitest';
import { hasChromium } from '../web/browser.ts';
import { ask, expectNoConsoleErrors, screenshots, setup } from '../web/web-app-setup.ts';

describe.skipIf(!hasChromium)('math in answers', () => {
  it('draws $…$, $$…$$ and \\(…\\) with KaTeX, loaded only when an answer has math', async () => {
    const math = [
      'Energy is $E = mc^2$, and a price of $5 stays a price.',
      '',
      '$$',
      '\\int_0^1 x\\,dx = \\frac{1}{2}',
      '$$',
      '',
      'Pythagoras: \\(a^2 + b^2 = c^2\\).',
    ].join('\n');
    const { page, browser } = await setup(({ body }) =>
      JSON.stringify(body.messages).includes('math please')
        ? { text: math, pieceDelayMs: 5 }
        : { text: 'No math here.' },
    );
    const loaded: string[] = [];
    page.on('request', (request) => {
      if (/katex|\/math-/i.test(request.url())) loaded.push(request.url());
    });
    await ask(page, 'Plain words');
    await page.getByText('No math here.').waitFor({ timeout: 20_000 });
    expect(loaded).toEqual([]);

    await ask(page, 'Some math please');
    const answer = page.getByRole('article', { name: 'Answer' }).nth(1);
    await answer.getByText('Pythagoras', { exact: false }).waitFor({ timeout: 20_000 });
    await expect.poll(() => answer.locator('.katex').count(), { timeout: 10_000 }).toBe(3);
    expect(await answer.locator('.katex-display').count()).toBe(1);
    // The formulas are drawn, not shown as their source; the price is left as written.
    expect(await answer.textContent()).not.toContain('$$');
    expect(await answer.textContent()).not.toContain('\\(');
    await answer.getByText('and a price of $5 stays a price.', { exact: false }).waitFor();
    expect(loaded.length).toBeGreaterThan(0);
    await screenshots(page, '33-5-math');
    expectNoConsoleErrors(browser);
  }, 90_000);
});
