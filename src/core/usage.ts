/** Token usage of one run or a subtree of runs. Missing provider counts are treated as zero. */
export interface Usage {
  inputTokens: number;
  outputTokens: number;
  totalTokens: number;
}

export const zeroUsage = (): Usage => ({ inputTokens: 0, outputTokens: 0, totalTokens: 0 });

/** Sums any number of usages into a new object. */
export function addUsage(...usages: Usage[]): Usage {
  const sum = zeroUsage();
  for (const usage of usages) {
    sum.inputTokens += usage.inputTokens;
    sum.outputTokens += usage.outputTokens;
    sum.totalTokens += usage.totalTokens;
  }
  return sum;
}

/** Converts AI SDK usage (fields may be undefined) to Cadre usage. */
export function usageFromSdk(usage: {
  inputTokens?: number | undefined;
  outputTokens?: number | undefined;
  totalTokens?: number | undefined;
}): Usage {
  const inputTokens = usage.inputTokens ?? 0;
  const outputTokens = usage.outputTokens ?? 0;
  return { inputTokens, outputTokens, totalTokens: usage.totalTokens ?? inputTokens + outputTokens };
}
