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

  it('gives none for a model without a price, and refuses a price that is not a number', async () => {
    const { env } = await fixtureCadre(answer, {
      pricing: { 'openai:gpt-5-mini': { inputPerMillion: 0.25, outputPerMillion: 2 } },
    });
    const output = JSON.parse(
      (await cadreInProcess(['ask', '--json', 'What is 2+2?'], env)).stdout,
    ) as object;
    expect(output).not.toHaveProperty('cost');
    expect((output as { run: object }).run).not.toHaveProperty('cost');

    const bad = await fixtureCadre(answer, {
      pricing: { 'compatible:fixture': { inputPerMillion: 'cheap' } },
    });
    const refused = await cadreInProcess(['ask', '--json', 'What is 2+2?'], bad.env);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/pricing/);
  });
});
