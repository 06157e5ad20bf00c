import { z } from 'zod';
import { providerOptionsSchema, reasoningSchema } from './model-options.ts';

/** Names models see as tool names: providers accept `[a-zA-Z0-9_-]{1,64}`. */
export const agentNameSchema = z
  .string()
  .regex(/^[a-zA-Z][a-zA-Z0-9_-]{0,63}$/, 'a name of letters, digits, "_" or "-", starting with a letter');

/**
 * `isolated` (nothing of the parent's conversation), `last-N` (last N user/assistant messages), `full`
 * (everything said) or `fork` (the parent's whole conversation and request prefix, see fork-context.ts).
 */
export const contextPolicySchema = z.union(
  [
    z.literal('isolated'),
    z.literal('full'),
    z.literal('fork'),
    z.templateLiteral(['last-', z.number().int().positive()]),
  ],
  { error: 'one of "isolated", "full", "fork" or "last-N" (e.g. "last-5")' },
);
export type ContextPolicy = z.infer<typeof contextPolicySchema>;

const modelRefSchema = z.union([z.literal('inherit'), z.string().regex(/^[a-z][a-z0-9-]*:.+$/)], {
  error: '"inherit" or "provider:model", e.g. "openai:gpt-5-mini"',
});

const commaList = z.preprocess(
  (value) =>
    typeof value === 'string'
      ? value
          .split(',')
          .map((item) => item.trim())
          .filter(Boolean)
      : value,
  z.array(z.string().min(1)),
);

/** An extra input an agent tool takes besides `task`, e.g. analyze_document's `document_id`. */
export const declaredInputSchema = z.strictObject({
  type: z.enum(['string', 'number', 'integer', 'boolean']).default('string'),
  description: z.string().default(''),
  required: z.boolean().default(true),
});
export type DeclaredInput = z.infer<typeof declaredInputSchema>;

/**
 * The validated shape of an agent definition, whether it came from a Markdown file's front matter plus
 * body, or from code. Limits left out fall back to the runtime's defaults.
 */
export const agentDefinitionSchema = z
  .strictObject({
    name: agentNameSchema,
    description: z.string().min(1, 'a one-line description of when to use the agent'),
    instructions: z.string().default(''),
    tools: commaList.default([]),
    /** Tools of this agent whose every call waits for a person's approval, e.g. `[run_js, web_fetch]`. */
    approval: commaList.default([]),
    model: modelRefSchema.optional(),
    maxTurns: z.number().int().min(1).max(200).optional(),
    context: contextPolicySchema.default('isolated'),
    /**
     * `true`: a delegation to this agent runs in the background (its parent goes on; the result comes to
     * it later as a message). `allowed`: the delegating agent chooses, with `background: true` in its call.
     */
    background: z
      .union([z.boolean(), z.literal('allowed')], { error: 'true, false or "allowed"' })
      .default(false),
    temperature: z.number().min(0).max(2).optional(),
    /** Wall-clock limit for one run, in seconds. */
    timeout: z.number().positive().optional(),
    /** Token budget for one run of this agent. */
    budget: z.number().int().positive().optional(),
    maxConcurrency: z.number().int().min(1).max(64).optional(),
    maxFanOut: z.number().int().min(1).max(64).optional(),
    maxDepth: z.number().int().min(0).max(8).optional(),
    /** Tokens one model call of this agent may write. */
    maxOutputTokens: z.number().int().min(1).max(1_000_000).optional(),
    /** Wall-clock limit for one model call, in seconds. */
    modelCallTimeout: z.number().positive().optional(),
    /** Seconds this agent's `ok` result is reused for the same request later in a session; 0 never. */
    reuseTtl: z.number().min(0).optional(),
    /** Characters of this agent's result its parent model sees. */
    maxResultChars: z.number().int().min(100).optional(),
    /** Gets the person's location and profile (config `person`) in its instructions; others never see them. */
    personContext: z.boolean().default(false),
    /** A tool the run's first model call must call (e.g. the planner's `update_plan`, so a plan comes first). */
    firstTool: z.string().min(1).optional(),
    inputs: z.record(z.string().regex(/^[a-z][a-zA-Z0-9_]*$/), declaredInputSchema).default({}),
    /** JSON Schema of the structured `data` the agent returns; validated before the parent sees it. */
    output: z.record(z.string(), z.unknown()).optional(),
    enabled: z.boolean().default(true),
    /** Reasoning effort (`low`, `high`…) or a thinking budget (`{budgetTokens: 8000}`), mapped per provider. */
    reasoning: reasoningSchema.optional(),
    /** Passed to the provider as they are, by provider name: `{anthropic: {...}}`, `{openai: {...}}`. */
    providerOptions: providerOptionsSchema.optional(),
  })
  .refine((definition) => definition.approval.every((name) => definition.tools.includes(name)), {
    message: "every tool in approval must be one of the agent's tools",
    path: ['approval'],
  })
  .refine((definition) => !definition.firstTool || definition.tools.includes(definition.firstTool), {
    message: "firstTool must be one of the agent's tools",
    path: ['firstTool'],
  });

export type AgentDefinitionInput = z.input<typeof agentDefinitionSchema>;
export type AgentDefinition = z.output<typeof agentDefinitionSchema>;

/** Number of parent messages a context policy lets through, or null for all of them. */
export function contextMessageCount(policy: ContextPolicy): number | null {
  if (policy === 'isolated') return 0;
  if (policy === 'full' || policy === 'fork') return null;
  return Number(policy.slice('last-'.length));
}
