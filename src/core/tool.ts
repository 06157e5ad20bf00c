import type { z } from 'zod';
import type { ResolvedSubject } from './approval-rules.ts';
import type { EventBody } from './events.ts';
import type { Vault } from './vault.ts';

/**
 * What a tool may know about the run that called it. Tools get their long-lived dependencies (HTTP
 * client, store, workspace root) from the factory that built them; this carries only per-call state.
 */
export interface ToolContext {
  runId: string;
  agent: string;
  depth: number;
  /** Aborted when the run is cancelled, times out or its parent ends. */
  signal: AbortSignal;
  /** The calling run's own scratch store. */
  vault: Vault;
  /** The person on whose behalf the run works; scopes documents and other per-user data. */
  userId: string;
  sessionId: string | undefined;
  /** The run's declared inputs besides its task (e.g. `document_id`). */
  inputs: Record<string, unknown>;
  /**
   * Calls another tool the same run is allowed to use (code mode). Refuses anything else. `signal` also
   * ends the call (e.g. when the sandbox that asked for it is gone); the run's own signal always does.
   */
  callTool(name: string, input: unknown, options?: { signal?: AbortSignal }): Promise<unknown>;
  /** Names of the tools the calling run may use, besides this one. */
  allowedTools(): string[];
  /** Emits an extra event on the calling run (e.g. a plan update). */
  emit(event: EventBody): void;
  /**
   * Records in the tree's journal, before the work begins, that this call is starting something which
   * may outlive the process (a command's process group): what a resumed attempt needs to deal with it
   * (see `CadreTool.interruptedStart`). Resolves once secured; absent when the run keeps no journal.
   */
  recordStart?: ((details: Record<string, unknown>) => Promise<void>) | undefined;
}

/** Why a tool is not offered right now, e.g. a missing API key, with what would enable it. */
export interface ToolUnavailable {
  reason: string;
  enableWith?: string;
}

export interface CadreTool<INPUT = any, OUTPUT = unknown> {
  name: string;
  description: string;
  /** Family for grouping in listings: web, knowledge, compute, documents, workspace, ... */
  family: string;
  input: z.ZodType<INPUT>;
  execute(input: INPUT, context: ToolContext): Promise<OUTPUT>;
  /** Returns why the tool cannot be offered (missing key, no documents) or undefined when it can. */
  unavailable?(): ToolUnavailable | undefined;
  /** What the model sees of the output; defaults to the output itself. */
  toModelOutput?(output: OUTPUT): unknown;
  /** Asks a person before every call unless an approval rule allows it (write_file, edit_file, bash). */
  needsApproval?: boolean;
  /**
   * What a call really acts on, for the approval rules to match: a path where it goes (workspace-relative,
   * through symlinks: `write_file(src/*)` must not allow `src/link` pointing at `package.json`), the
   * commands a shell line runs; null when it cannot be said, which asks.
   */
  approvalSubject?(input: INPUT, context: Pick<ToolContext, 'userId'>): Promise<ResolvedSubject | null>;
  /**
   * For a call an interrupted attempt started (it called `recordStart` with `started`) and never finished:
   * deals with what may be left of it (bash stops its process group, so the call never runs twice at once)
   * and says what became of it, in a sentence or two, for the person asked whether to run it again.
   */
  interruptedStart?(started: Record<string, unknown>, context: ToolContext): Promise<string>;
  /** Only offered to agents that name it explicitly (never through "all tools" lists). */
  explicitOnly?: boolean;
  /**
   * Starts, in the background, what the first call would otherwise wait for (a worker, a library); called
   * once a run that may use the tool has sent its first model request, so the wait overlaps the model's
   * answer and does not delay the request. Never throws.
   */
  warm?(): void;
}

/** Declares a tool with its input schema; the identity function, there for inference. */
export function defineTool<INPUT, OUTPUT>(tool: CadreTool<INPUT, OUTPUT>): CadreTool<INPUT, OUTPUT> {
  return tool;
}
