import type { LanguageModel, ModelMessage } from 'ai';
import type { AgentDefinition } from './agent-definition.ts';
import type { ChildRunner } from './child-runs.ts';
import type { ForkedPrefix } from './fork-context.ts';
import type { RuntimeLimits } from './limits.ts';
import type { ModelSettings } from './model-options.ts';
import type { ParentRun } from './run-frame.ts';
import type { ToolRegistry } from './tool-registry.ts';

/**
 * What the run loop (run-agent.ts) is given: the runtime's services and one run's spec. Apart from the
 * loop itself, so the code that starts children (run-children.ts) can name them without importing it.
 */

/** What the loop needs from the runtime that owns it. */
export interface LoopServices {
  agents: ReadonlyMap<string, AgentDefinition>;
  tools: ToolRegistry;
  resolveModel: (ref: string) => LanguageModel | PromiseLike<LanguageModel>;
  modelRefFor: (definition: AgentDefinition, parent: ParentRun | undefined) => string;
  limitsFor: (definition: AgentDefinition) => RuntimeLimits;
  prepareAgent?: PrepareAgent;
  /** Wraps the in-process child runner (a queue, an observer); default: children run here. */
  childRunner?: (inProcess: ChildRunner) => ChildRunner;
  /** Awaited before each model request: the store's durability barrier (see RuntimeOptions). */
  beforeModelRequest?: () => void | Promise<void>;
  /** The configuration's reasoning, caching and provider options (an agent's own win). */
  modelSettings?: ModelSettings;
}

/** Adds run-specific instructions (e.g. a document's text) or refuses the run with a clear error. */
export type PrepareAgent = (request: {
  agent: string;
  inputs: Record<string, unknown>;
  userId: string;
  signal: AbortSignal;
}) => Promise<{ instructions?: string } | undefined>;

export interface RunSpec {
  definition: AgentDefinition;
  task: string;
  inputs: Record<string, unknown>;
  parent: ParentRun | undefined;
  /** The run's id when it is decided before it starts (a queued run); else a new one. */
  runId?: string;
  /** Messages before the task: a session's history for a root run, a context-policy slice for a child. */
  history: ModelMessage[];
  signal: AbortSignal;
  modelRef?: string;
  prefetch?: { agent: string; task: string };
  /** The parent's tool call this run answers. */
  parentToolCallId?: string;
  /** Limits for this run only, over its definition's (e.g. `cadre ask --max-turns 3` for the root). */
  limits?: Partial<RuntimeLimits>;
  /**
   * When the run must end at the latest (ms since the epoch): its parent's deadline, for a child run away
   * from its parent's process (the parent's signal cannot reach it). It ends `cancelled` then.
   */
  notAfter?: number;
  /** The finished run this one continues from its own conversation (`history`), for its run-start. */
  continues?: string;
  /** `context: fork`: the parent's instructions and tools its requests begin with (see fork-context.ts). */
  fork?: ForkedPrefix;
  /** Runs in the background (its parent went on), for its run-start. */
  background?: true;
}
