import { z } from 'zod';
import { toolSettingsSchema } from '../tools/settings.ts';

const modelRef = z
  .string()
  .regex(/^[a-z][a-z0-9-]*:.+$/, 'a "provider:model" reference, e.g. "openai:gpt-5-mini"');
const positiveInt = z.number().int().positive();

/** The shape of config.json files (and of the merged configuration). Every field is optional. */
export const configSchema = z.strictObject({
  model: modelRef.optional(),
  subagentModel: modelRef.optional(),
  limits: z
    .strictObject({
      maxTurns: positiveInt.optional(),
      maxDepth: z.number().int().min(0).max(8).optional(),
      timeoutSeconds: z.number().positive().optional(),
      runBudget: positiveInt.optional(),
      treeBudget: positiveInt.optional(),
      maxConcurrency: positiveInt.optional(),
      maxFanOut: positiveInt.optional(),
      maxToolOutputChars: positiveInt.optional(),
      maxOutputTokens: positiveInt.optional(),
      modelCallTimeoutSeconds: z.number().positive().optional(),
      maxResultChars: z.number().int().min(100).optional(),
    })
    .optional(),
  retry: z
    .strictObject({
      maxRetries: z.number().int().min(0).max(10).optional(),
      baseDelayMs: z.number().int().min(0).optional(),
      maxDelayMs: z.number().int().min(0).optional(),
    })
    .optional(),
  agents: z
    .record(z.string(), z.strictObject({ enabled: z.boolean().optional(), model: modelRef.optional() }))
    .optional(),
  delegation: z
    .strictObject({
      mode: z.enum(['on-demand', 'prefetch']).optional(),
      prefetch: z
        .strictObject({
          agent: z.string().min(1),
          /** A regular expression (case-insensitive) the question must match for prefetch to run. */
          trigger: z.string().min(1),
        })
        .optional(),
    })
    .optional(),
  tools: toolSettingsSchema.optional(),
  server: z
    .strictObject({ host: z.string().optional(), port: z.number().int().min(0).max(65535).optional() })
    .optional(),
});

export type CadreConfig = z.infer<typeof configSchema>;
