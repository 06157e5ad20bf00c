import type { Source } from './envelope.ts';
import type { CadreEvent, PlanStep } from './events.ts';
import type { RunState } from './status.ts';
import { addUsage, type Usage, zeroUsage } from './usage.ts';

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

/** The run tree JSON of CONTRACTS.md: what `--json`, `runs show` and `GET /api/runs/:id` print. */
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
  model: string;
  /** The worker process that executed the run, when runs are jobs. */
  worker?: string;
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

/**
 * Folds events into run trees. Live views and stored runs use the same fold, so a tree read back from
 * the store is exactly the tree the CLI printed. Text deltas are counted, not kept: the summary arrives
 * whole in `run-finish`.
 */
export class RunTreeBuilder {
  #runs = new Map<string, RunTree>();
  #roots: RunTree[] = [];

  apply(event: CadreEvent): void {
    if (event.type === 'run-start') {
      const node: RunTree = {
        id: event.runId,
        parentId: event.parentRunId,
        agent: event.agent,
        task: event.task,
        status: 'running',
        summary: '',
        model: event.model,
        turns: 0,
        startedAt: new Date(event.time).toISOString(),
        endedAt: null,
        usage: zeroUsage(),
        subtreeUsage: zeroUsage(),
        toolCalls: [],
        children: [],
        ...(event.worker ? { worker: event.worker } : {}),
      };
      this.#runs.set(node.id, node);
      const parent = event.parentRunId ? this.#runs.get(event.parentRunId) : undefined;
      if (parent) parent.children.push(node);
      else this.#roots.push(node);
      return;
    }
    const node = this.#runs.get(event.runId);
    if (!node) return;
    switch (event.type) {
      case 'tool-call':
        // A call told twice (replayed after a retry) is one call.
        if (node.toolCalls.some((call) => call.id === event.toolCallId)) return;
        node.toolCalls.push({
          id: event.toolCallId,
          name: event.name,
          input: event.input,
          ok: null,
          ms: null,
          ...(event.refused ? { refused: event.refused } : {}),
          ...(event.deduplicated ? { deduplicated: true } : {}),
          ...(event.reused ? { reused: event.reused } : {}),
        });
        return;
      case 'tool-result': {
        const call = node.toolCalls.find((candidate) => candidate.id === event.toolCallId);
        if (!call) return;
        call.ok = event.ok;
        call.ms = event.ms;
        if (event.error) call.error = event.error;
        const diff = (event.output as { diff?: unknown } | null | undefined)?.diff;
        if (event.ok && typeof diff === 'string') call.diff = diff;
        return;
      }
      case 'step-finish':
        node.turns = event.step + 1;
        node.usage = addUsage(node.usage, event.usage);
        return;
      case 'plan-update':
        node.plan = event.steps;
        return;
      case 'run-finish':
        node.status = event.status;
        node.summary = event.summary;
        if (event.data !== undefined) node.data = event.data;
        if (event.sources) node.sources = event.sources;
        if (event.untrusted) node.untrusted = true;
        node.usage = event.usage;
        node.subtreeUsage = event.subtreeUsage;
        node.endedAt = new Date(event.time).toISOString();
        return;
      case 'run-error':
        node.error = event.message;
        return;
      case 'run-resume':
        // The worker that went on with the run (and finished it) is the one the tree names.
        if (event.worker) node.worker = event.worker;
        return;
      default:
        return;
    }
  }

  get(runId: string): RunTree | undefined {
    return this.#runs.get(runId);
  }

  roots(): RunTree[] {
    return this.#roots;
  }

  all(): RunTree[] {
    return [...this.#runs.values()];
  }
}

/** Builds the tree rooted at `rootId` from its events (in any order of runs, each run's own in seq order). */
export function buildRunTree(events: Iterable<CadreEvent>, rootId?: string): RunTree | undefined {
  const builder = new RunTreeBuilder();
  for (const event of events) builder.apply(event);
  return rootId ? builder.get(rootId) : builder.roots()[0];
}

/** Own usage of every run in a tree, summed; equals the root's subtree usage when every run finished. */
export function sumTreeUsage(tree: RunTree): Usage {
  return addUsage(tree.usage, ...tree.children.map(sumTreeUsage));
}
