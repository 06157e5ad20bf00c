/**
 * What tokens cost in money, for the models whose prices the configuration gives (`pricing`, per
 * "provider:model": `{inputPerMillion, outputPerMillion, cachedInputPerMillion?, cacheWritePerMillion?,
 * reasoningPerMillion?, currency?}`). Nothing is built in: prices change and differ by account, so a model
 * without a configured price has no cost, never a guessed one.
 *
 * Cost is computed as the providers bill: input tokens read from the prompt cache at the cached-input
 * price, tokens written to it at the cache-write price, the rest of the input at the input price; reasoning
 * tokens at the reasoning price where one is given (else they are output tokens, as OpenAI, Anthropic and
 * Gemini bill them), the rest of the output at the output price.
 */
import type { RunTree } from '../core/run-tree.ts';
import { type Cost, type Usage, uncachedInputTokens } from '../core/usage.ts';

/** One model's price per million tokens, in `currency` (an ISO 4217 code; USD when not given). */
export interface ModelPrice {
  inputPerMillion: number;
  outputPerMillion: number;
  /** Input tokens read from the prompt cache; without it they are unpriced and the cost is `partial`. */
  cachedInputPerMillion?: number | undefined;
  /** Input tokens written to the prompt cache; without it they are billed as plain input. */
  cacheWritePerMillion?: number | undefined;
  /** Reasoning tokens, where a provider prices them apart from output; without it, the output price. */
  reasoningPerMillion?: number | undefined;
  currency?: string | undefined;
}

export type Pricing = Readonly<Record<string, ModelPrice>>;

export type { Cost };

/** What `usage` on `model` cost, or undefined when the model has no configured price. */
export function costOf(pricing: Pricing | undefined, model: string, usage: Usage): Cost | undefined {
  const price = pricing?.[model];
  if (!price) return undefined;
  const cacheRead = usage.cacheReadTokens ?? 0;
  const cacheWrite = usage.cacheWriteTokens ?? 0;
  const reasoning = usage.reasoningTokens ?? 0;
  const perMillion =
    uncachedInputTokens(usage) * price.inputPerMillion +
    cacheRead * (price.cachedInputPerMillion ?? 0) +
    cacheWrite * (price.cacheWritePerMillion ?? price.inputPerMillion) +
    (usage.outputTokens - reasoning) * price.outputPerMillion +
    reasoning * (price.reasoningPerMillion ?? price.outputPerMillion);
  const cost: Cost = { amount: round(perMillion / 1_000_000), currency: price.currency ?? 'USD' };
  // Cache reads without a cached-input price are left out, not billed at the full input price (which
  // overstates the bill by the cache's whole discount): the amount is then a lower bound.
  if (cacheRead > 0 && price.cachedInputPerMillion === undefined) cost.partial = true;
  return cost;
}

/**
 * Adds the costs of several runs. A run that used tokens but has no cost (`undefined`) makes the sum
 * partial; so does a cost in another currency than the first one's. Undefined when nothing had a price.
 */
export function addCosts(parts: Array<{ cost: Cost | undefined; tokens: number }>): Cost | undefined {
  let sum: Cost | undefined;
  let partial = false;
  for (const { cost, tokens } of parts) {
    if (!cost) {
      if (tokens > 0) partial = true;
      continue;
    }
    if (cost.partial) partial = true;
    if (!sum) sum = { amount: cost.amount, currency: cost.currency };
    else if (sum.currency === cost.currency) sum.amount = round(sum.amount + cost.amount);
    else partial = true;
  }
  if (sum && partial) sum.partial = true;
  return sum;
}

/**
 * What a run on a model without a price cost, where some model has one: nothing known, shown as a lower
 * bound of 0 in the configured currency and marked partial, rather than no cost at all (which reads as
 * "free" beside the priced runs). Undefined when the run used no tokens.
 */
export function unpricedCost(pricing: Pricing, tokens: number): Cost | undefined {
  if (tokens <= 0) return undefined;
  const currency = Object.values(pricing)[0]?.currency ?? 'USD';
  return { amount: 0, currency, partial: true };
}

/** A run tree JSON with `cost` and `subtreeCost` beside `usage` and `subtreeUsage` where a price applies. */
export type PricedRunTree = RunTree & { cost?: Cost; subtreeCost?: Cost; children: PricedRunTree[] };

/** Adds costs to a run tree (a new tree; the given one is left as it is). */
export function priceTree(tree: RunTree, pricing: Pricing | undefined): PricedRunTree {
  const children = tree.children.map((child) => priceTree(child, pricing));
  if (!pricing || Object.keys(pricing).length === 0) return { ...tree, children };
  const cost = costOf(pricing, tree.model, tree.usage) ?? unpricedCost(pricing, tree.usage.totalTokens);
  const subtreeCost = addCosts([
    { cost, tokens: tree.usage.totalTokens },
    ...children.map((child) => ({ cost: child.subtreeCost, tokens: child.subtreeUsage.totalTokens })),
  ]);
  return { ...tree, ...(cost ? { cost } : {}), ...(subtreeCost ? { subtreeCost } : {}), children };
}

/** Money is kept to a billionth of its unit: finer than one token of the cheapest model, without float noise. */
function round(amount: number): number {
  return Math.round(amount * 1e9) / 1e9;
}
