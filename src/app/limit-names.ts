import type { CadreConfig } from '../config/schema.ts';
import { namedLimits } from '../core/limit-names.ts';
import type { RuntimeLimits } from '../core/limits.ts';

/** The config file's `limits` in the runtime's terms, through the one table of limit names. */
export function limitsFromConfig(limits: NonNullable<CadreConfig['limits']>): Partial<RuntimeLimits> {
  return namedLimits(limits, 'config');
}
