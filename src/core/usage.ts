/** Token usage of one run or a subtree of runs. */
export interface Usage {
  inputTokens: number;
  outputTokens: number;
  totalTokens: number;
  /**
   * Present (true) when some of these tokens were estimated from the text because the provider reported
   * none: the figure is approximate, but never a silent 0 that would let a budget pass.
   */
  estimated?: true;
}

export const zeroUsage = (): Usage => ({ inputTokens: 0, outputTokens: 0, totalTokens: 0 });

/** Sums any number of usages into a new object; the sum is estimated when any part was. */
export function addUsage(...usages: Usage[]): Usage {
  const sum = zeroUsage();
  for (const usage of usages) {
    sum.inputTokens += usage.inputTokens;
    sum.outputTokens += usage.outputTokens;
    sum.totalTokens += usage.totalTokens;
    if (usage.estimated) sum.estimated = true;
  }
  return sum;
}

/** Converts AI SDK usage (fields may be undefined) to Cadre usage. */
export function usageFromSdk(
  usage: {
    inputTokens?: number | undefined;
    outputTokens?: number | undefined;
    totalTokens?: number | undefined;
  },
  estimated = false,
): Usage {
  const inputTokens = usage.inputTokens ?? 0;
  const outputTokens = usage.outputTokens ?? 0;
  return {
    inputTokens,
    outputTokens,
    totalTokens: usage.totalTokens ?? inputTokens + outputTokens,
    ...(estimated ? { estimated: true as const } : {}),
  };
}

/**
 * Tokens a text of this many characters is likely to be. Four characters a token is the usual rule of
 * thumb for English with OpenAI/Llama-style tokenizers; it is only used when a provider reports nothing.
 */
export function estimateTokens(characters: number): number {
  return Math.ceil(characters / 4);
}
