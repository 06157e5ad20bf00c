/**
 * Token usage of one run or a subtree of runs, as providers report it. `inputTokens` counts every input
 * token, cached or not, and `outputTokens` every output token, reasoning included (the totals all three
 * big providers bill from); the details say how many of those were read from or written to the prompt
 * cache and how many went to reasoning, because each of those is priced apart. A detail is present only
 * when it is above zero, so a provider that caches nothing keeps the plain three-number shape.
 */
export interface Usage {
  inputTokens: number;
  outputTokens: number;
  totalTokens: number;
  /** Of `inputTokens`: read from the provider's prompt cache (billed at the cached-input price). */
  cacheReadTokens?: number;
  /** Of `inputTokens`: written to the provider's prompt cache (Anthropic bills them above the input price). */
  cacheWriteTokens?: number;
  /** Of `outputTokens`: spent on reasoning (thinking) before the answer. */
  reasoningTokens?: number;
  /**
   * Present (true) when some of these tokens were estimated from the text because the provider reported
   * none: the figure is approximate, but never a silent 0 that would let a budget pass.
   */
  estimated?: true;
}

/**
 * An amount of money. `partial` when some of the tokens it covers came from a model without a price (or
 * priced in another currency): the amount is then what the priced tokens cost, a lower bound.
 */
export interface Cost {
  amount: number;
  currency: string;
  partial?: true;
}

/** The detail counts of a usage, each part of one of its totals. */
export const usageDetails = ['cacheReadTokens', 'cacheWriteTokens', 'reasoningTokens'] as const;

export const zeroUsage = (): Usage => ({ inputTokens: 0, outputTokens: 0, totalTokens: 0 });

/** Sums any number of usages into a new object; the sum is estimated when any part was. */
export function addUsage(...usages: Usage[]): Usage {
  const sum = zeroUsage();
  for (const usage of usages) {
    sum.inputTokens += usage.inputTokens;
    sum.outputTokens += usage.outputTokens;
    sum.totalTokens += usage.totalTokens;
    for (const detail of usageDetails) {
      const count = usage[detail];
      if (count) sum[detail] = (sum[detail] ?? 0) + count;
    }
    if (usage.estimated) sum.estimated = true;
  }
  return sum;
}

/** AI SDK's usage of a step (`LanguageModelUsage`): every field may be undefined. */
export interface SdkUsage {
  inputTokens?: number | undefined;
  outputTokens?: number | undefined;
  totalTokens?: number | undefined;
  inputTokenDetails?: { cacheReadTokens?: number | undefined; cacheWriteTokens?: number | undefined };
  outputTokenDetails?: { reasoningTokens?: number | undefined };
}

/** Converts AI SDK usage to Cadre usage, keeping the cache and reasoning details. */
export function usageFromSdk(usage: SdkUsage, estimated = false): Usage {
  const inputTokens = usage.inputTokens ?? 0;
  const outputTokens = usage.outputTokens ?? 0;
  const result: Usage = {
    inputTokens,
    outputTokens,
    totalTokens: usage.totalTokens ?? inputTokens + outputTokens,
  };
  const details = {
    cacheReadTokens: usage.inputTokenDetails?.cacheReadTokens,
    cacheWriteTokens: usage.inputTokenDetails?.cacheWriteTokens,
    reasoningTokens: usage.outputTokenDetails?.reasoningTokens,
  };
  for (const detail of usageDetails) {
    const count = details[detail];
    if (count) result[detail] = count;
  }
  if (estimated) result.estimated = true;
  return result;
}

/** A provider's stream-level usage (`LanguageModelV4Usage`): totals with their parts. */
export interface StreamUsage {
  inputTokens: {
    total?: number | undefined;
    cacheRead?: number | undefined;
    cacheWrite?: number | undefined;
  };
  outputTokens: { total?: number | undefined; reasoning?: number | undefined };
}

/** Converts a provider's stream-level usage to Cadre usage. */
export function usageFromStream(usage: StreamUsage, estimated = false): Usage {
  return usageFromSdk(
    {
      inputTokens: usage.inputTokens.total,
      outputTokens: usage.outputTokens.total,
      inputTokenDetails: {
        cacheReadTokens: usage.inputTokens.cacheRead,
        cacheWriteTokens: usage.inputTokens.cacheWrite,
      },
      outputTokenDetails: { reasoningTokens: usage.outputTokens.reasoning },
    },
    estimated,
  );
}

/** Input tokens that were neither read from nor written to a prompt cache: billed at the input price. */
export function uncachedInputTokens(usage: Usage): number {
  return Math.max(0, usage.inputTokens - (usage.cacheReadTokens ?? 0) - (usage.cacheWriteTokens ?? 0));
}

/**
 * Tokens a text of this many characters is likely to be. Four characters a token is the usual rule of
 * thumb for English with OpenAI/Llama-style tokenizers; it is only used when a provider reports nothing.
 */
export function estimateTokens(characters: number): number {
  return Math.ceil(characters / 4);
}
