import { describe, expect, it } from 'vitest';
import { configSchema } from '../config/schema.ts';
import { agentDefinitionSchema } from '../core/agent-definition.ts';
import { LIMIT_NAMES, namedLimits } from '../core/limit-names.ts';
import { DEFAULT_LIMITS } from '../core/limits.ts';
import { limitsFromConfig } from './limit-names.ts';

describe('limits named once', () => {
  it('names every runtime limit, every config limit and every definition limit in one table', () => {
    expect(LIMIT_NAMES.map((entry) => entry.limit).sort()).toEqual(Object.keys(DEFAULT_LIMITS).sort());
    // Checked before any run exists: the question's size (the CLI's), a definition file's size (the loader's).
    const beforeRuns = new Set(['maxQuestionChars', 'maxDefinitionBytes']);
    const configLimits = Object.keys(configSchema.shape.limits.unwrap().shape).filter(
      (name) => !beforeRuns.has(name),
    );
    expect(LIMIT_NAMES.map((entry) => entry.config).sort()).toEqual(configLimits.sort());
    const definitionFields = Object.keys(agentDefinitionSchema.shape);
    for (const entry of LIMIT_NAMES) {
      if (entry.definition) expect(definitionFields, entry.definition).toContain(entry.definition);
    }
  });

  it('converts seconds to milliseconds, the same way for config and definitions', () => {
    expect(limitsFromConfig({ timeoutSeconds: 30, runBudget: 1000, modelCallTimeoutSeconds: 5 })).toEqual({
      timeoutMs: 30_000,
      runBudget: 1000,
      modelCallTimeoutMs: 5_000,
    });
    expect(namedLimits({ timeout: 30, budget: 1000, maxTurns: 3, name: 'x' }, 'definition')).toEqual({
      timeoutMs: 30_000,
      runBudget: 1000,
      maxTurns: 3,
    });
  });
});
