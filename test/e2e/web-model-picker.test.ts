/**
 * The model picker (issue 33, item 8), in real Chromium against a real `cadre serve`: the model badge
 * opens the models the set-up provider lists (here a compatible server's `GET /models`); the one chosen
 * answers the next question; a model of a provider with no key here is refused when chosen, with the
 * variable it needs named, and the model stays as it was.
 */
import { describe, expect, it } from 'vitest';
import { hasChromium } from '../web/browser.ts';
import { ask, screenshots, setup } from '../web/web-app-setup.ts';

describe.skipIf(!hasChromium)('the model picker', () => {
  it('chooses main’s model from the badge, uses it next, and refuses one whose provider has no key', async () => {
    const { page, browser, model } = await setup(({ body }) => ({ text: `Answered by ${body.model}.` }), {
      models: ['fixture', 'fixture-large'],
      env: { ANTHROPIC_API_KEY: '', OPENAI_API_KEY: '' },
    });
    await ask(page, 'First question');
    await page.getByText('Answered by fixture.').waitFor({ timeout: 20_000 });

    const badge = page.getByRole('button', { name: 'Model: compatible:fixture' });
    await badge.click();
    const menu = page.getByRole('dialog', { name: 'Models for main' });
    const large = menu.getByRole('button', { name: 'fixture-large' });
    await large.waitFor({ timeout: 10_000 });
    // The current model is marked; the providers not set up say what they need.
    expect(
      await menu.getByRole('button', { name: 'fixture', exact: true }).getAttribute('aria-pressed'),
    ).toBe('true');
    await menu.getByText('anthropic (ANTHROPIC_API_KEY)', { exact: false }).waitFor();
    // On a phone the top bar with the badge still fits the screen: nothing scrolls sideways.
    await page.setViewportSize({ width: 375, height: 760 });
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(375);
    await page.setViewportSize({ width: 1280, height: 860 });
    await screenshots(page, '33-8-model-picker');

    await large.click();
    await page.getByRole('button', { name: 'Model: compatible:fixture-large' }).waitFor({ timeout: 10_000 });
    expect(await menu.count()).toBe(0);
    await ask(page, 'Second question');
    await page.getByText('Answered by fixture-large.').waitFor({ timeout: 20_000 });
    expect(model.requests.at(-1)?.body.model).toBe('fixture-large');

    // A provider with no key: refused when chosen, not on the next question.
    await page.getByRole('button', { name: 'Model: compatible:fixture-large' }).click();
    await menu.getByRole('textbox', { name: 'Another model' }).fill('anthropic:claude-sonnet-4-5');
    await menu.getByRole('button', { name: 'Use' }).click();
    const refusal = menu.getByRole('alert');
    await refusal.waitFor({ timeout: 10_000 });
    expect(await refusal.textContent()).toContain('ANTHROPIC_API_KEY');
    await screenshots(page, '33-8-model-refused');
    // Esc closes the list and the model is the one chosen before.
    await menu.getByRole('textbox', { name: 'Another model' }).press('Escape');
    expect(await menu.count()).toBe(0);
    await page.reload();
    await page.getByRole('button', { name: 'Model: compatible:fixture-large' }).waitFor({ timeout: 10_000 });
    const requestsBefore = model.requests.length;
    await ask(page, 'Third question');
    await page.getByText('Answered by fixture-large.').nth(1).waitFor({ timeout: 20_000 });
    expect(
      model.requests.slice(requestsBefore).every((request) => request.body.model === 'fixture-large'),
    ).toBe(true);

    // Per agent: the Agents panel's model fields offer the same list, and refuse a provider with no key there too.
    await page.getByRole('button', { name: 'Agents' }).click();
    const field = page.getByRole('combobox', { name: 'research model' });
    await field.waitFor({ timeout: 10_000 });
    await expect
      .poll(() =>
        page
          .locator('#agent-model-choices option')
          .evaluateAll((options) => options.map((o) => (o as HTMLOptionElement).value)),
      )
      .toEqual(['compatible:fixture', 'compatible:fixture-large']);
    await field.fill('compatible:fixture-large');
    await field.press('Enter');
    await page.getByText('Saved research.').waitFor({ timeout: 10_000 });
    await field.fill('openai:gpt-5-mini');
    await field.press('Enter');
    const panelRefusal = page.getByRole('alert').filter({ hasText: 'OPENAI_API_KEY' });
    await panelRefusal.waitFor({ timeout: 10_000 });
    await expect.poll(() => field.inputValue()).toBe('compatible:fixture-large');
    await panelRefusal.scrollIntoViewIfNeeded();
    await screenshots(page, '33-8-agent-model-refused');

    // The refused choices are the failed requests the console may show.
    expect(browser.errors.filter((error) => !error.includes('status of 400'))).toEqual([]);
  }, 120_000);
});
