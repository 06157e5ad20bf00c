import type { CadreConfig } from '../config/schema.ts';
import type { RuntimeLimits } from '../core/limits.ts';

/** The config file's `limits` in the runtime's terms (seconds become milliseconds). */
export function limitsFromConfig(limits: NonNullable<CadreConfig['limits']>): Partial<RuntimeLimits> {
  return {
    maxTurns: limits.maxTurns,
    maxDepth: limits.maxDepth,
    timeoutMs: limits.timeoutSeconds === undefined ? undefined : limits.timeoutSeconds * 1000,
    runBudget: limits.runBudget,
    treeBudget: limits.treeBudget,
    maxConcurrency: limits.maxConcurrency,
    maxFanOut: limits.maxFanOut,
    maxToolOutputChars: limits.maxToolOutputChars,
    maxOutputTokens: limits.maxOutputTokens,
    modelCallTimeoutMs:
      limits.modelCallTimeoutSeconds === undefined ? undefined : limits.modelCallTimeoutSeconds * 1000,
    maxResultChars: limits.maxResultChars,
    maxToolCallsPerStep: limits.maxToolCallsPerStep,
    maxToolInputChars: limits.maxToolInputChars,
    maxToolInputDepth: limits.maxToolInputDepth,
  } as Partial<RuntimeLimits>;
}
