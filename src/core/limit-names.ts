import type { RuntimeLimits } from './limits.ts';

/**
 * Every runtime limit once: its name in code, in config files (`limits.*`) and in agent definition files
 * (front matter), and how many code units one written unit is (seconds are written, milliseconds kept).
 * A limit with no definition name cannot be set per agent.
 */
export const LIMIT_NAMES: ReadonlyArray<{
  limit: keyof RuntimeLimits;
  config: string;
  definition?: string;
  scale?: number;
}> = [
  { limit: 'maxTurns', config: 'maxTurns', definition: 'maxTurns' },
  { limit: 'maxDepth', config: 'maxDepth', definition: 'maxDepth' },
  { limit: 'timeoutMs', config: 'timeoutSeconds', definition: 'timeout', scale: 1000 },
  { limit: 'runBudget', config: 'runBudget', definition: 'budget' },
  { limit: 'treeBudget', config: 'treeBudget' },
  { limit: 'maxConcurrency', config: 'maxConcurrency', definition: 'maxConcurrency' },
  { limit: 'maxFanOut', config: 'maxFanOut', definition: 'maxFanOut' },
  { limit: 'maxToolOutputChars', config: 'maxToolOutputChars' },
  { limit: 'maxOutputTokens', config: 'maxOutputTokens', definition: 'maxOutputTokens' },
  {
    limit: 'modelCallTimeoutMs',
    config: 'modelCallTimeoutSeconds',
    definition: 'modelCallTimeout',
    scale: 1000,
  },
  { limit: 'maxResultChars', config: 'maxResultChars', definition: 'maxResultChars' },
  { limit: 'maxToolCallsPerStep', config: 'maxToolCallsPerStep' },
  { limit: 'maxToolInputChars', config: 'maxToolInputChars' },
  { limit: 'maxToolInputDepth', config: 'maxToolInputDepth' },
  { limit: 'maxStoredOutputChars', config: 'maxStoredOutputChars' },
  { limit: 'maxBackground', config: 'maxBackground' },
];

/** The limits a config file's `limits` or a definition's front matter sets, in the runtime's terms. */
export function namedLimits(source: object, names: 'config' | 'definition'): Partial<RuntimeLimits> {
  const values = source as Record<string, unknown>;
  const limits: Partial<Record<keyof RuntimeLimits, number>> = {};
  for (const entry of LIMIT_NAMES) {
    const name = entry[names];
    const value = name === undefined ? undefined : values[name];
    if (typeof value === 'number') limits[entry.limit] = value * (entry.scale ?? 1);
  }
  return limits as Partial<RuntimeLimits>;
}
