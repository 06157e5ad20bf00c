import { z } from 'zod';
import { ModelBehaviorError } from '../../core/errors.ts';
import { defineTool } from '../../core/tool.ts';

const keySchema = z
  .string()
  .min(1)
  .max(128)
  .regex(/^[\w.:-]+$/, 'letters, digits, "_", ".", ":" or "-"');

/** Stores a value in the calling run's own scratch vault. */
export const vaultSetTool = defineTool({
  name: 'vault_set',
  family: 'compute',
  description:
    'Save a value under a key in your private scratch vault, to reuse later in this task (e.g. intermediate results).',
  input: z.object({ key: keySchema, value: z.unknown().describe('Any JSON value') }),
  async execute({ key, value }, context) {
    context.vault.set(key, value ?? null);
    return { key, stored: true };
  },
});

/** Reads a value from the calling run's own scratch vault. */
export const vaultGetTool = defineTool({
  name: 'vault_get',
  family: 'compute',
  description: 'Read a value you saved earlier with vault_set.',
  input: z.object({ key: keySchema }),
  async execute({ key }, context) {
    if (!context.vault.has(key)) {
      const known = context.vault.keys();
      throw new ModelBehaviorError(
        'tool_input',
        `no vault entry "${key}"${known.length ? `; keys: ${known.join(', ')}` : '; the vault is empty'}`,
      );
    }
    return { key, value: context.vault.get(key) };
  },
});
