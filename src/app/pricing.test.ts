import { describe, expect, it } from 'vitest';
import type { RunTree } from '../core/run-tree.ts';
import { addCosts, costOf, priceTree } from './pricing.ts';
import { exportFileName, formatCost } from './session-export.ts';

const usage = (inputTokens: number, outputTokens: number) => ({
  inputTokens,
  outputTokens,
  totalTokens: inputTokens + outputTokens,
});

function run(id: string, model: string, tokens: [number, number], children: RunTree[] = []): RunTree {
  const own = usage(...tokens);
  const subtree = children.reduce(
    (sum, child) =>
      usage(
        sum.inputTokens + child.subtreeUsage.inputTokens,
        sum.outputTokens + child.subtreeUsage.outputTokens,
      ),
    own,
  );
  return {
    id,
    parentId: null,
    agent: id,
    task: 't',
    status: 'ok',
    summary: '',
    model,
    turns: 1,
    startedAt: '2026-01-01T00:00:00.000Z',
    endedAt: '2026-01-01T00:00:01.000Z',
    usage: own,
    subtreeUsage: subtree,
    toolCalls: [],
    children,
  };
}

const pricing = {
  'openai:gpt-5-mini': { inputPerMillion: 0.25, outputPerMillion: 2 },
  'mistral:small': { inputPerMillion: 0.1, outputPerMillion: 0.3, currency: 'EUR' },
};

describe('pricing', () => {
  it('prices tokens per million, only for configured models', () => {
    expect(costOf(pricing, 'openai:gpt-5-mini', usage(2_000_000, 500_000))).toEqual({
      amount: 1.5,
      currency: 'USD',
    });
    expect(costOf(pricing, 'mistral:small', usage(1_000_000, 0))).toEqual({ amount: 0.1, currency: 'EUR' });
    expect(costOf(pricing, 'ollama:qwen3', usage(10, 10))).toBeUndefined();
    expect(costOf(undefined, 'openai:gpt-5-mini', usage(10, 10))).toBeUndefined();
  });

  it('prices cache writes and reads apart from plain input, as Anthropic bills them', () => {
    // Anthropic reports input_tokens 50, cache_creation 2,000, cache_read 6,000: AI SDK's input total is
    // their sum. At 3 input, 3.75 cache write, 0.30 cache read, 15 output per million:
    // 50×3 + 2000×3.75 + 6000×0.3 + 400×15 = 15,450 → 0.01545.
    const sonnet = {
      inputPerMillion: 3,
      outputPerMillion: 15,
      cachedInputPerMillion: 0.3,
      cacheWritePerMillion: 3.75,
    };
    const used = {
      inputTokens: 8050,
      outputTokens: 400,
      totalTokens: 8450,
      cacheReadTokens: 6000,
      cacheWriteTokens: 2000,
    };
    expect(costOf({ 'anthropic:claude-sonnet-4-5': sonnet }, 'anthropic:claude-sonnet-4-5', used)).toEqual({
      amount: 0.01545,
      currency: 'USD',
    });
    // No cache-write price: written tokens are plain input (OpenAI and Gemini bill no write surcharge).
    const { cacheWritePerMillion: _, ...plain } = sonnet;
    expect(costOf({ m: plain }, 'm', used)?.amount).toBe(0.01395);
  });

  it('adds costs, saying when the sum leaves tokens unpriced or mixes currencies', () => {
    const usd = { amount: 0.1, currency: 'USD' };
    expect(
      addCosts([
        { cost: usd, tokens: 5 },
        { cost: usd, tokens: 5 },
      ]),
    ).toEqual({ amount: 0.2, currency: 'USD' });
    expect(
      addCosts([
        { cost: usd, tokens: 5 },
        { cost: undefined, tokens: 0 },
      ]),
    ).toEqual(usd);
    expect(
      addCosts([
        { cost: usd, tokens: 5 },
        { cost: undefined, tokens: 7 },
      ]),
    ).toEqual({ ...usd, partial: true });
    expect(
      addCosts([
        { cost: usd, tokens: 5 },
        { cost: { amount: 1, currency: 'EUR' }, tokens: 5 },
      ]),
    ).toEqual({
      ...usd,
      partial: true,
    });
    expect(addCosts([{ cost: undefined, tokens: 9 }])).toBeUndefined();
  });

  it('prices a run tree: each run its own, each subtree with its sub-agents', () => {
    const tree = run(
      'main',
      'openai:gpt-5-mini',
      [1_000_000, 0],
      [run('math', 'openai:gpt-5-mini', [0, 1_000_000]), run('local', 'ollama:qwen3', [100, 100])],
    );
    const priced = priceTree(tree, pricing);
    expect(priced.cost).toEqual({ amount: 0.25, currency: 'USD' });
    expect(priced.subtreeCost).toEqual({ amount: 2.25, currency: 'USD', partial: true });
    expect(priced.children[0]?.subtreeCost).toEqual({ amount: 2, currency: 'USD' });
    // The run on a model without a price shows what is known: nothing priced, a lower bound.
    expect(priced.children[1]?.cost).toEqual({ amount: 0, currency: 'USD', partial: true });
    expect(priceTree(run('alone', 'ollama:qwen3', [10, 10]), pricing).subtreeCost).toEqual({
      amount: 0,
      currency: 'USD',
      partial: true,
    });
    expect(tree).not.toHaveProperty('cost');
    expect(priceTree(tree, undefined)).not.toHaveProperty('subtreeCost');
  });

  it('writes a cost for people and a title as a file name', () => {
    expect(formatCost({ amount: 0.0018, currency: 'USD' })).toBe('0.0018 USD');
    expect(formatCost({ amount: 0.0009, currency: 'USD' })).toBe('0.0009 USD');
    expect(formatCost({ amount: 12.4, currency: 'EUR', partial: true })).toBe('≥ 12.40 EUR');
    expect(formatCost({ amount: 0, currency: 'USD' })).toBe('0.00 USD');
    expect(exportFileName('Trip to Lyon: café & trains?', 'md')).toBe('trip-to-lyon-cafe-trains.md');
    expect(exportFileName('???', 'json')).toBe('chat.json');
  });
});
