import { z } from 'zod';
import { ruleEntryProblem } from '../core/approval-rules.ts';
import { providerOptionsSchema, reasoningSchema } from '../core/model-options.ts';
import { mcpServerNameSchema, mcpServerSchema } from '../tools/mcp/server-config.ts';
import { toolSettingsSchema } from '../tools/settings.ts';
import { isPrefetchTrigger } from './prefetch-trigger.ts';

const modelRef = z
  .string()
  .regex(/^[a-z][a-z0-9-]*:.+$/, 'a "provider:model" reference, e.g. "openai:gpt-5-mini"');
const positiveInt = z.number().int().positive();

export { type McpServerConfig, mcpServerNameSchema, mcpServerSchema } from '../tools/mcp/server-config.ts';

const approvalEntries = z.array(
  z.string().superRefine((entry, context) => {
    const problem = ruleEntryProblem(entry);
    if (problem) context.addIssue({ code: 'custom', message: problem });
  }),
);

/** The shape of config.json files (and of the merged configuration). Every field is optional. */
export const configSchema = z.strictObject({
  model: modelRef.optional(),
  subagentModel: modelRef.optional(),
  limits: z
    .strictObject({
      maxTurns: positiveInt.optional(),
      /** Characters a question (with what was piped in) may have; more is refused before any model call. */
      maxQuestionChars: positiveInt.optional(),
      /** Bytes an agent definition file may have (default 256 KiB); a larger one is reported and skipped. */
      maxDefinitionBytes: positiveInt.optional(),
      maxDepth: z.number().int().min(0).max(8).optional(),
      timeoutSeconds: z.number().positive().optional(),
      runBudget: positiveInt.optional(),
      treeBudget: positiveInt.optional(),
      maxConcurrency: positiveInt.optional(),
      maxFanOut: positiveInt.optional(),
      maxToolOutputChars: positiveInt.optional(),
      /** Characters of one tool output recorded in the store (default 1,000,000); past it, its head and size. */
      maxStoredOutputChars: positiveInt.optional(),
      maxOutputTokens: positiveInt.optional(),
      modelCallTimeoutSeconds: z.number().positive().optional(),
      maxResultChars: z.number().int().min(100).optional(),
      maxToolCallsPerStep: positiveInt.optional(),
      maxToolInputChars: z.number().int().min(1_000).optional(),
      maxToolInputDepth: z.number().int().min(4).max(1_000).optional(),
      /** Sub-agents one answer may have running in the background at once (default 4); 0 turns background off. */
      maxBackground: z.number().int().min(0).max(64).optional(),
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
    .record(
      z.string(),
      z.strictObject({
        enabled: z.boolean().optional(),
        model: modelRef.optional(),
        /** Wall-clock limit for each run of this agent, over its definition's `timeout`. */
        timeoutSeconds: z.number().positive().optional(),
        /** This agent's reasoning effort or thinking budget, over its definition's and the global one. */
        reasoning: reasoningSchema.optional(),
        /** This agent's provider options, merged over the global ones. */
        providerOptions: providerOptionsSchema.optional(),
      }),
    )
    .optional(),
  delegation: z
    .strictObject({
      /**
       * `off`: main answers alone (no sub-agents); `delegate`: main delegates when it sees fit (the API's
       * name; the old `on-demand` is read as it, with a warning); `prefetch`: a sub-agent runs first.
       */
      mode: z.enum(['off', 'delegate', 'prefetch']).optional(),
      prefetch: z
        .strictObject({
          agent: z.string().min(1),
          /** A regular expression (case-insensitive, RE2 syntax) the question must match for prefetch to run. */
          trigger: z.string().min(1).refine(isPrefetchTrigger, {
            message: 'a regular expression in RE2 syntax (no lookaround or backreferences)',
          }),
        })
        .optional(),
      /** Seconds a sub-agent's result is reused for the same task asked again in one session; 0 turns it off. */
      reuseTtlSeconds: z.number().min(0).optional(),
    })
    .optional(),
  /** About the person, for the agents whose definitions ask for it (`personContext: true`). */
  person: z
    .strictObject({
      location: z.string().trim().min(1).max(200).optional(),
      profile: z.string().trim().min(1).max(2000).optional(),
    })
    .optional(),
  tools: toolSettingsSchema.optional(),
  /** Bounds on adding one document (README, "Document size limits"); each replaces its default. */
  documents: z
    .strictObject({
      maxFileMegabytes: z.number().positive().optional(),
      maxTextChars: positiveInt.optional(),
      maxPages: positiveInt.optional(),
      maxUnpackedMegabytes: z.number().positive().optional(),
      parseTimeoutSeconds: z.number().positive().optional(),
      parseMemoryMb: z.number().int().min(32).optional(),
    })
    .optional(),
  /**
   * Which tool calls wait for a person (Claude Code's permission-rule shape): entries are `tool`,
   * `mcp__server__*` or `tool(subject)` such as `bash(npm test:*)`. deny wins, then ask, then allow.
   */
  approvals: z
    .strictObject({
      allow: approvalEntries.optional(),
      ask: approvalEntries.optional(),
      deny: approvalEntries.optional(),
      /** Seconds a call waits for a decision before it is denied (default 300). */
      timeoutSeconds: z.number().positive().optional(),
    })
    .optional(),
  mcpServers: z.record(mcpServerNameSchema, mcpServerSchema).optional(),
  /** Every agent's reasoning effort (`"low"`…) or thinking budget (`{budgetTokens: N}`) unless it sets its own. */
  reasoning: reasoningSchema.optional(),
  /** Provider options for every agent's calls, by provider name, passed through as AI SDK takes them. */
  providerOptions: providerOptionsSchema.optional(),
  /** Cache breakpoints (Anthropic) and a cache key per agent (OpenAI); default true. */
  promptCaching: z.boolean().optional(),
  /** An OpenAI organisation with Zero Data Retention: `store: false` with encrypted reasoning. */
  zeroDataRetention: z.boolean().optional(),
  /**
   * What each model's tokens cost, per million, by "provider:model" (none built in): runs on a priced
   * model show their cost beside their tokens. Cache reads, cache writes and reasoning have their own
   * prices (see app/pricing.ts for how a cost is computed). `currency` is an ISO 4217 code (default USD).
   */
  pricing: z
    .record(
      modelRef,
      z.strictObject({
        inputPerMillion: z.number().min(0),
        outputPerMillion: z.number().min(0),
        cachedInputPerMillion: z.number().min(0).optional(),
        cacheWritePerMillion: z.number().min(0).optional(),
        reasoningPerMillion: z.number().min(0).optional(),
        currency: z
          .string()
          .regex(/^[A-Z]{3}$/, 'an ISO 4217 currency code such as "USD" or "EUR"')
          .optional(),
      }),
    )
    .optional(),
  /**
   * A server that several people share (users from `cadre users add`): no user gets the operator's
   * working folder. Each gets `<workspaces>/<user id>` as their own root when `workspaces` is set, none
   * otherwise; write_file, edit_file and bash stay off unless `codingTools` is true, and bash then runs
   * in the sandbox, reaching only the hosts in `sandboxAllowedDomains`.
   */
  multiUser: z
    .strictObject({
      workspaces: z.string().min(1).optional(),
      codingTools: z.boolean().optional(),
      sandboxAllowedDomains: z.array(z.string().min(1)).optional(),
      /** Environment variables users' commands get besides PATH, the locale, TERM and TZ (names). */
      /** Run users' commands even though the server runs as root (refused without it). */
      sandboxAsRoot: z.boolean().optional(),
      sandboxEnv: z
        .array(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'an environment variable name'))
        .optional(),
    })
    .optional(),
  /**
   * Where the store lives when it is not the embedded SQLite file: a PostgreSQL database every Cadre
   * process of a deployment shares (`CADRE_DATABASE_URL` sets it too).
   */
  database: z
    .strictObject({
      url: z
        .string()
        .regex(/^postgres(ql)?:\/\/\S+$/, 'a PostgreSQL URL: postgres://USER:PASSWORD@HOST:PORT/DATABASE')
        .optional(),
    })
    .optional(),
  /** The queue of runs as jobs (PostgreSQL): what operators are told of it. */
  queue: z
    .strictObject({
      /** Seconds a run a worker holds may store no event before `cadre workers` flags it (default 120). */
      silentAfterSeconds: z.number().positive().optional(),
      /**
       * Seconds a question may wait for a worker to take it before it is withdrawn and its asker told
       * (default 600); 0 waits for ever.
       */
      waitTimeoutSeconds: z.number().min(0).optional(),
    })
    .optional(),
  /** `/metrics` (Prometheus's text format) on `cadre serve` and on `cadre worker --port`; off by default. */
  metrics: z.boolean().optional(),
  server: z
    .strictObject({
      host: z.string().optional(),
      port: z.number().int().min(0).max(65535).optional(),
      /** Host names the server answers to besides loopback and its own address (a proxy's name). */
      allowedHosts: z.array(z.string().min(1)).optional(),
      /** Browser origins, besides the server's own, allowed to call the API. */
      allowedOrigins: z.array(z.string().min(1)).optional(),
      /** Addresses of reverse proxies whose X-Forwarded-For names the client (else it is ignored). */
      trustedProxies: z.array(z.string().min(1)).optional(),
      maxBodyBytes: positiveInt.optional(),
      maxUploadBytes: positiveInt.optional(),
      maxConcurrentChats: positiveInt.optional(),
      /** Agent calls one user may have running at once over /mcp (all their sessions together). */
      maxConcurrentMcpCalls: positiveInt.optional(),
      /** Deepest nesting of arrays and objects in a chat body. */
      maxJsonDepth: positiveInt.optional(),
      /** Files one upload request may carry (default 20). */
      maxFilesPerUpload: positiveInt.optional(),
      /** Uploads one user may have in progress at once (default 2); more get 429. */
      maxConcurrentUploads: positiveInt.optional(),
      /** Uploads in progress on the whole server, so parse workers at once (default 6). */
      maxConcurrentUploadsTotal: positiveInt.optional(),
      /** Wrong tokens one address (or aimed at one token id) per minute before 429s (default 20). */
      maxFailedAuthPerMinute: positiveInt.optional(),
      /** Seconds a client may take to send a whole request, body included (default 60). */
      requestTimeoutSeconds: z.number().positive().optional(),
      /** Seconds a client may take to send a request's headers (default 15). */
      headersTimeoutSeconds: z.number().positive().optional(),
    })
    .optional(),
});

export type CadreConfig = z.infer<typeof configSchema>;
