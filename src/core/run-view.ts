import type { Source } from './envelope.ts';
import type { BackgroundDelivery, CadreEvent, PlanStep } from './events.ts';
import type { RunState } from './status.ts';
import { addUsage, type Cost, type Usage, zeroUsage } from './usage.ts';

/**
 * The one picture of a run: what its events have told so far, folded by `foldRun` (below). Every reader
 * of a run reads this shape or a rendering of it: the run tree JSON (`renderRunTree`: `cadre runs show
 * --json`, `GET /api/runs/:id`), the `data-run` parts of the chat stream and of stored answers
 * (`app/answer/`), the CLI's live tree, and the page's run cards (web/src/runs imports this file; the type
 * is the page's own run type, not a copy of it).
 *
 * This file imports nothing but types and `addUsage`, so the page's bundle loads it as it is.
 */
export interface RunView {
  runId: string;
  parentRunId: string | null;
  rootRunId: string;
  depth: number;
  agent: string;
  task: string;
  model: string;
  /** `running` until the run's `run-finish` (see `stopping` for what a `run-error` already told). */
  status: RunState;
  /** Milliseconds since the epoch (its first event's time until its `run-start` is known). */
  startedAt: number;
  /** Set by the run's `run-finish`. */
  endedAt?: number;
  /** The parent's tool call that started this run (absent at the root). */
  parentToolCallId?: string;
  /** The worker process that executed the run (the last one, when it went on elsewhere). */
  worker?: string;
  /** Started with its parent's whole conversation and request prefix (`context: fork`). */
  forked?: true;
  /** Runs in the background: its parent went on, and gets its envelope as a message when it ends. */
  background?: true;
  /** The run's result, whole, from its `run-finish`. */
  summary?: string;
  error?: string;
  data?: unknown;
  sources?: Source[];
  /** The result is derived from untrusted external content (see core/untrusted.ts). */
  untrusted?: boolean;
  /** A person stopped this run alone (its parent went on with what it had). */
  stoppedBy?: 'person';
  /** The run's own final usage, from its `run-finish` (`stepUsage` while it runs). */
  usage?: Usage;
  subtreeUsage?: Usage;
  /** What `usage` cost, when the run's model has a configured price (added by the app, which has prices). */
  cost?: Cost;
  subtreeCost?: Cost;
  /** The sum of the usage its finished model steps reported. */
  stepUsage: Usage;
  /** Model steps (calls) finished. */
  steps: number;
  /** Everything the run streamed as text, and as reasoning. */
  text: string;
  reasoning: string;
  toolCalls: RunToolCall[];
  plan?: PlanStep[];
  /** The finished run this one continues from its own conversation (`continue_agent`). */
  continues?: string;
  /**
   * What a person said to the run while it ran, and the envelopes of its background runs delivered to it
   * (`background`), as each joined its conversation (`run-message`).
   */
  messages?: Array<{ id: string; text: string; step: number; time: number; background?: BackgroundDelivery }>;
  /** The provider asked the run to wait: its model call will be tried again (until the run's next event). */
  retry?: RetryNotice;
  /** A `run-error` told how the run is ending before its `run-finish` came: shown as its outcome already. */
  stopping?: { status: RunState; time: number };
  /** The number of the run's last event folded: an event numbered no higher (a replay) is one already seen. */
  lastSeq: number;
}

/** One tool call of a run. */
export interface RunToolCall {
  id: string;
  name: string;
  input: unknown;
  /** Absent while the call runs (false at once for a call refused before it ran). */
  ok?: boolean;
  output?: unknown;
  error?: string;
  ms?: number;
  /** Why the call was refused before it ran (unknown tool, bad arguments, a limit). */
  refused?: string;
  /** The call was answered from an earlier identical delegation. */
  deduplicated?: boolean;
  /** Answered with an earlier question's result of the same request (see ToolCallEvent.reused). */
  reused?: { runId: string; finishedAt: string };
  /** The unified diff a file-changing tool (edit_file, write_file) reported. */
  diff?: string;
  /** Set from `approval-request` / `approval-result` events: the call waits for, or got, a decision. */
  approval?: { approvalId: string; approved?: boolean; by?: string; reason?: string };
}

/** A model call about to be tried again: attempt `attempt` of at most `maxAttempts`, after `delayMs`. */
export interface RetryNotice {
  attempt: number;
  maxAttempts: number;
  delayMs: number;
  reason: string;
}

/** A run nothing is known of but its first event's header. */
function emptyRun(event: CadreEvent, parent: RunView | undefined): RunView {
  return {
    runId: event.runId,
    parentRunId: event.parentRunId,
    rootRunId: parent?.rootRunId ?? (event.parentRunId === null ? event.runId : event.rootRunId),
    depth: event.depth,
    agent: event.agent,
    task: '',
    model: '',
    status: 'running',
    startedAt: event.time,
    stepUsage: zeroUsage(),
    steps: 0,
    text: '',
    reasoning: '',
    toolCalls: [],
    lastSeq: -1,
  };
}

/**
 * Applies one event to a run's view and returns the new view: a new object whenever something changed
 * (the page compares by identity), the same one for an event already folded (a replay: the run's number
 * again). `parent` (the parent's view, when known) gives a run its tree's root. Constant work per event
 * but for tool results and approvals, which look their call up among the run's calls.
 */
export function foldRun(previous: RunView | undefined, event: CadreEvent, parent?: RunView): RunView {
  if (previous && event.seq <= previous.lastSeq) return previous;
  const run: RunView = { ...(previous ?? emptyRun(event, parent)) };
  applyEvent(run, event);
  return run;
}

/**
 * The fold itself, in place (RunProjection's: nobody there compares views by identity, and a text delta
 * then costs no copy of the view). A run's calls are replaced, never changed in place, so a copy made by
 * `foldRun` shares nothing that changes.
 */
function applyEvent(run: RunView, event: CadreEvent): void {
  run.lastSeq = event.seq;
  // A retry is told until the run's next event.
  if (run.retry && event.type !== 'model-retry') delete run.retry;
  switch (event.type) {
    case 'run-start':
      run.task = event.task;
      run.model = event.model;
      run.startedAt = event.time;
      if (event.parentToolCallId) run.parentToolCallId = event.parentToolCallId;
      if (event.worker) run.worker = event.worker;
      if (event.continues) run.continues = event.continues;
      if (event.forked) run.forked = true;
      if (event.background) run.background = true;
      break;
    case 'text-delta':
      run.text += event.delta;
      break;
    case 'reasoning-delta':
      run.reasoning += event.delta;
      break;
    case 'tool-call':
      // A call told twice (replayed after a retry) is one call.
      if (run.toolCalls.some((call) => call.id === event.toolCallId)) break;
      run.toolCalls = [
        ...run.toolCalls,
        {
          id: event.toolCallId,
          name: event.name,
          input: event.input,
          ...(event.refused === undefined ? {} : { ok: false, refused: event.refused }),
          ...(event.deduplicated ? { deduplicated: true } : {}),
          ...(event.reused ? { reused: event.reused } : {}),
        },
      ];
      break;
    case 'tool-result': {
      const diff = (event.output as { diff?: unknown } | null | undefined)?.diff;
      run.toolCalls = run.toolCalls.map((call) =>
        call.id === event.toolCallId
          ? {
              ...call,
              ok: event.ok,
              ms: event.ms,
              ...(event.output === undefined ? {} : { output: event.output }),
              ...(event.error === undefined ? {} : { error: event.error }),
              ...(event.ok && typeof diff === 'string' ? { diff } : {}),
            }
          : call,
      );
      break;
    }
    case 'approval-request': {
      const approval = { approvalId: event.approvalId };
      const known = run.toolCalls.some((call) => call.id === event.toolCallId);
      run.toolCalls = known
        ? run.toolCalls.map((call) => (call.id === event.toolCallId ? { ...call, approval } : call))
        : [...run.toolCalls, { id: event.toolCallId, name: event.name, input: event.input, approval }];
      break;
    }
    case 'approval-result':
      run.toolCalls = run.toolCalls.map((call) =>
        call.id === event.toolCallId
          ? {
              ...call,
              approval: {
                approvalId: event.approvalId,
                approved: event.approved,
                by: event.by,
                ...(event.reason === undefined ? {} : { reason: event.reason }),
              },
            }
          : call,
      );
      break;
    case 'step-finish':
      run.steps += 1;
      run.stepUsage = addUsage(run.stepUsage, event.usage);
      break;
    case 'plan-update':
      run.plan = event.steps;
      break;
    case 'run-message':
      run.messages = [
        ...(run.messages ?? []),
        {
          id: event.messageId,
          text: event.text,
          step: event.step,
          time: event.time,
          ...(event.background ? { background: event.background } : {}),
        },
      ];
      break;
    case 'model-retry':
      run.retry = {
        attempt: event.attempt,
        maxAttempts: event.maxAttempts,
        delayMs: event.delayMs,
        reason: event.reason,
      };
      break;
    case 'run-error':
      run.error = event.message;
      run.stopping = { status: event.status, time: event.time };
      break;
    case 'run-resume':
      // The worker that went on with the run (and finished it) is the one the tree names.
      if (event.worker) run.worker = event.worker;
      break;
    case 'run-finish':
      run.status = event.status;
      run.summary = event.summary;
      if (event.data !== undefined) run.data = event.data;
      if (event.sources) run.sources = event.sources;
      if (event.untrusted) run.untrusted = true;
      if (event.stoppedBy) run.stoppedBy = event.stoppedBy;
      run.usage = event.usage;
      run.subtreeUsage = event.subtreeUsage;
      run.endedAt = event.time;
      delete run.stopping;
      break;
  }
}

/**
 * The projector: a tree's (or several trees') events folded, incrementally and in one pass, into one
 * `RunView` per run, with each run's children in the order they started. Whoever holds the events holds
 * one of these and reads every picture of the tree from it.
 */
export class RunProjection {
  readonly #runs = new Map<string, RunView>();
  readonly #children = new Map<string, string[]>();
  readonly #roots: string[] = [];
  /** The runs whose `run-start` was folded: only those are in the run tree. */
  readonly #started = new Set<string>();

  /**
   * Folds one event into its run's view (in place) and returns the view; undefined when the event was
   * folded already (a replay: its run's number again), which changes nothing.
   */
  apply(event: CadreEvent): RunView | undefined {
    let run = this.#runs.get(event.runId);
    if (run && event.seq <= run.lastSeq) return undefined;
    const parent = event.parentRunId ? this.#runs.get(event.parentRunId) : undefined;
    if (!run) {
      run = emptyRun(event, parent);
      this.#runs.set(event.runId, run);
    }
    applyEvent(run, event);
    // A run sits under its parent when the parent had started; otherwise it is a root of its own.
    if (event.type === 'run-start' && !this.#started.has(run.runId)) {
      this.#started.add(run.runId);
      if (parent && this.#started.has(parent.runId)) {
        const siblings = this.#children.get(parent.runId) ?? [];
        siblings.push(run.runId);
        this.#children.set(parent.runId, siblings);
      } else this.#roots.push(run.runId);
    }
    return run;
  }

  /** The run's view, or undefined when no event of it was folded. */
  get(runId: string): RunView | undefined {
    return this.#runs.get(runId);
  }

  /** Whether the run's `run-start` was folded. */
  started(runId: string): boolean {
    return this.#started.has(runId);
  }

  /** The ids of the run's started children, in the order they started. */
  children(runId: string): readonly string[] {
    return this.#children.get(runId) ?? [];
  }

  /** The ids of the started runs with no started parent (one per tree), in the order they started. */
  roots(): readonly string[] {
    return this.#roots;
  }

  /** Every run folded so far. */
  all(): IterableIterator<RunView> {
    return this.#runs.values();
  }

  /** The run tree JSON of the tree under `runId` (the first root without one); undefined if it never started. */
  tree(runId?: string): RunTree | undefined {
    const id = runId ?? this.#roots[0];
    return id !== undefined && this.#started.has(id) ? renderRunTree(this, id) : undefined;
  }
}

/** One tool call in the run tree JSON. */
export interface ToolCallRecord {
  id: string;
  name: string;
  input: unknown;
  ok: boolean | null;
  ms: number | null;
  error?: string;
  refused?: string;
  deduplicated?: boolean;
  /** Answered with an earlier question's result of the same request (see ToolCallEvent.reused). */
  reused?: { runId: string; finishedAt: string };
  /** The unified diff a file-changing tool (edit_file, write_file) reported: the run tree shows edits. */
  diff?: string;
}

/**
 * The run tree JSON of CONTRACTS.md: what `--json`, `runs show` and `GET /api/runs/:id` print. A rendering
 * of the runs' views (`renderRunTree`), in the names and units the contract has (`id`, ISO times).
 */
export interface RunTree {
  id: string;
  parentId: string | null;
  agent: string;
  task: string;
  status: RunState;
  summary: string;
  data?: unknown;
  sources?: Source[];
  /** True when the result is derived from untrusted external content (web pages, API answers). */
  untrusted?: boolean;
  /** A person stopped this run alone (its parent went on with what it had). */
  stoppedBy?: 'person';
  /**
   * What a person said to the run while it ran, each before the model step it joined, and the envelopes of
   * its background runs delivered to it (`background`).
   */
  messages?: Array<{ id: string; text: string; step: number; background?: BackgroundDelivery }>;
  /** Ran in the background: its parent went on, and got its envelope later as a message. */
  background?: true;
  /** The finished run this one continues from its own conversation (`continue_agent`). */
  continues?: string;
  model: string;
  /** The worker process that executed the run, when runs are jobs. */
  worker?: string;
  /** Started with its parent's whole conversation (`context: fork`). */
  forked?: true;
  /** Model calls made so far. */
  turns: number;
  startedAt: string;
  endedAt: string | null;
  usage: Usage;
  subtreeUsage: Usage;
  toolCalls: ToolCallRecord[];
  plan?: PlanStep[];
  error?: string;
  children: RunTree[];
}

/** The run tree JSON of the run `runId` and every started run below it (`children` lists only those). */
export function renderRunTree(
  projection: Pick<RunProjection, 'get' | 'children'>,
  runId: string,
): RunTree | undefined {
  const run = projection.get(runId);
  if (!run) return undefined;
  const children: RunTree[] = [];
  for (const child of projection.children(runId)) {
    const node = renderRunTree(projection, child);
    if (node) children.push(node);
  }
  return {
    id: run.runId,
    parentId: run.parentRunId,
    agent: run.agent,
    task: run.task,
    status: run.status,
    summary: run.summary ?? '',
    ...(run.data !== undefined ? { data: run.data } : {}),
    ...(run.sources ? { sources: run.sources } : {}),
    ...(run.untrusted ? { untrusted: true } : {}),
    ...(run.stoppedBy ? { stoppedBy: run.stoppedBy } : {}),
    ...(run.messages ? { messages: run.messages.map(({ time: _time, ...message }) => message) } : {}),
    ...(run.background ? { background: true as const } : {}),
    ...(run.continues ? { continues: run.continues } : {}),
    model: run.model,
    ...(run.worker ? { worker: run.worker } : {}),
    ...(run.forked ? { forked: true as const } : {}),
    turns: run.steps,
    startedAt: new Date(run.startedAt).toISOString(),
    endedAt: run.endedAt === undefined ? null : new Date(run.endedAt).toISOString(),
    usage: run.usage ?? run.stepUsage,
    subtreeUsage: run.subtreeUsage ?? zeroUsage(),
    toolCalls: run.toolCalls.map(toolCallRecord),
    ...(run.plan ? { plan: run.plan } : {}),
    ...(run.error !== undefined ? { error: run.error } : {}),
    children,
  };
}

function toolCallRecord(call: RunToolCall): ToolCallRecord {
  return {
    id: call.id,
    name: call.name,
    input: call.input,
    ok: call.ok ?? null,
    ms: call.ms ?? null,
    ...(call.error !== undefined ? { error: call.error } : {}),
    ...(call.refused ? { refused: call.refused } : {}),
    ...(call.deduplicated ? { deduplicated: true } : {}),
    ...(call.reused ? { reused: call.reused } : {}),
    ...(call.diff !== undefined ? { diff: call.diff } : {}),
  };
}
