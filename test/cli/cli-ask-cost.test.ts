import { describe, expect, it } from 'vitest';
import { cadreInProcess, fixtureCadre } from '../helpers/cli-in-process.ts';

/** One model call of 1,000 tokens in and 100 out: 0.25 and 2 per million make it 0.00045. */
const answer = () => ({ text: 'Four.', usage: { prompt_tokens: 1000, completion_tokens: 100 } });

describe('cadre ask --json with configured prices', () => {
  it('gives the cost beside the usage, at the top and in the run tree', async () => {
    const { env } = await fixtureCadre(answer, {
      pricing: { 'compatible:fixture': { inputPerMillion: 0.25, outputPerMillion: 2 } },
    });
    const result = await cadreInProcess(['ask', '--json', 'What is 2+2?'], env);
    expect(result.code).toBe(0);
    const output = JSON.parse(result.stdout) as Record<string, unknown>;
    expect(output).toMatchObject({
      usage: { inputTokens: 1000, outputTokens: 100, totalTokens: 1100 },
      cost: { amount: 0.00045, currency: 'USD' },
      run: { cost: { amount: 0.00045, currency: 'USD' }, subtreeCost: { amount: 0.00045, currency: 'USD' } },
    });
  });

  it('bills cache reads at the cached-input price and reasoning at its own price, as the provider does', async () => {
    // 1,000 in of which 800 cached, 300 out of which 200 reasoning. At 1.25 input, 0.125 cached, 10
    // output and 12 reasoning per million: 200×1.25 + 800×0.125 + 100×10 + 200×12 = 3,750 → 0.00375.
    const cached = () => ({
      text: 'Four.',
      usage: {
        prompt_tokens: 1000,
        completion_tokens: 300,
        prompt_tokens_details: { cached_tokens: 800 },
        completion_tokens_details: { reasoning_tokens: 200 },
      },
    });
    const price = { inputPerMillion: 1.25, outputPerMillion: 10, cachedInputPerMillion: 0.125 };
    const { env } = await fixtureCadre(cached, {
      pricing: { 'compatible:fixture': { ...price, reasoningPerMillion: 12 } },
    });
    const output = JSON.parse((await cadreInProcess(['ask', '--json', 'What is 2+2?'], env)).stdout);
    expect(output).toMatchObject({
      usage: { inputTokens: 1000, outputTokens: 300, cacheReadTokens: 800, reasoningTokens: 200 },
      cost: { amount: 0.00375, currency: 'USD' },
      run: { usage: { cacheReadTokens: 800, reasoningTokens: 200 } },
    });
    expect(output.cost).not.toHaveProperty('partial');

    // Without a cached-input price the cache reads are unpriced: a lower bound, never the full input price.
    const unpriced = await fixtureCadre(cached, {
      pricing: { 'compatible:fixture': { inputPerMillion: 1.25, outputPerMillion: 10 } },
    });
    const lower = JSON.parse((await cadreInProcess(['ask', '--json', 'What is 2+2?'], unpriced.env)).stdout);
    expect(lower.cost).toEqual({ amount: 0.00325, currency: 'USD', partial: true });
  });

  it('marks the cost of a model without a price as unknown (0 and partial), and refuses a price that is not a number', async () => {
    const { env } = await fixtureCadre(answer, {
      pricing: { 'openai:gpt-5-mini': { inputPerMillion: 0.25, outputPerMillion: 2 } },
    });
    const output = JSON.parse(
      (await cadreInProcess(['ask', '--json', 'What is 2+2?'], env)).stdout,
    ) as object;
    // Not "no cost" (read as free beside the priced runs): what is known, a lower bound.
    expect((output as { cost?: object }).cost).toEqual({ amount: 0, currency: 'USD', partial: true });
    expect((output as { run: { cost?: object } }).run.cost).toEqual({
      amount: 0,
      currency: 'USD',
      partial: true,
    });

    const bad = await fixtureCadre(answer, {
      pricing: { 'compatible:fixture': { inputPerMillion: 'cheap' } },
    });
    const refused = await cadreInProcess(['ask', '--json', 'What is 2+2?'], bad.env);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/pricing/);
  });
});
