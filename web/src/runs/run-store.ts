/**
 * Every run the page knows, by id: its persistent header (`data-run` parts, live or stored) and the fold of
 * its transient events. Components subscribe to one run each, and notifications are batched to one per
 * animation frame, so eight siblings streaming at once (or 50 runs × 200 events) re-render each changed
 * run at most once a frame and leave the others alone.
 */
import { useCallback, useSyncExternalStore } from 'react';
import type { CadreEvent, RunPartData } from './protocol.ts';
import { foldRun, mergeRun, type RunView } from './run-fold.ts';

type Listener = () => void;

/** A tool call waiting for the person's decision. */
export interface PendingApproval {
  approvalId: string;
  runId: string;
  agent: string;
  toolCallId: string;
  name: string;
  input: unknown;
  expiresAt: number;
  /** The call may have run already (an interrupted attempt started it): said before the person decides. */
  warning?: string;
  /** The runs from the root down to the one asking, each with its task: who asks, under whom, for what. */
  path: Array<{ runId: string; agent: string; task?: string }>;
}

/** The listener key for changes to the pending approvals. */
const APPROVALS = ' approvals';
const NO_APPROVALS: readonly PendingApproval[] = Object.freeze([]);
const NO_CHILDREN: readonly string[] = Object.freeze([]);
/** The listener key for changes to how many runs run in the background. */
const BACKGROUND = ' background';
/** The listener key for whether a run's card is open. */
const OPEN = ' open ';
/** Where the ids of the cards a person opened are kept, so a reload shows them open again. */
const OPEN_KEY = 'cadre.open-runs';
/** How many opened cards are remembered (the newest): enough for any chat a person reads. */
const OPEN_KEPT = 500;

function readOpen(): string[] {
  try {
    const kept = JSON.parse(localStorage.getItem(OPEN_KEY) ?? '[]') as unknown;
    return Array.isArray(kept) ? kept.filter((id): id is string => typeof id === 'string') : [];
  } catch {
    return [];
  }
}

export class RunStore {
  #headers = new Map<string, RunPartData>();
  /** The fold of each run's events (the server's fold: an event a run has had already is left out). */
  #live = new Map<string, RunView>();
  #views = new Map<string, RunView | undefined>();
  #children = new Map<string, readonly string[]>();
  #byToolCall = new Map<string, string>();
  #listeners = new Map<string, Set<Listener>>();
  #dirty = new Set<string>();
  #scheduled = false;
  #approvals: readonly PendingApproval[] = NO_APPROVALS;
  #open: Set<string> | undefined;
  /** The runs known to be running in the background now (`background` on their run-start, not ended). */
  #background = new Set<string>();
  /**
   * The runs whose model has answered (their last step ended without calling a tool) and to which nothing
   * has joined since: a main agent in here, with runs of its tree in the background, waits only for them.
   */
  #answered = new Set<string>();
  #schedule: (flush: () => void) => void;

  /** `schedule` defers notifications (one animation frame in the browser; tests pass their own). */
  constructor(schedule?: (flush: () => void) => void) {
    this.#schedule =
      schedule ??
      ((flush) =>
        typeof requestAnimationFrame === 'function' ? requestAnimationFrame(flush) : setTimeout(flush, 16));
  }

  /** Records a `data-run` part (a header at start or end, or a stored one with its history). */
  putHeader(header: RunPartData): void {
    const previous = this.#headers.get(header.runId);
    if (previous && sameHeader(previous, header)) return;
    this.#headers.set(header.runId, header);
    if (header.parentToolCallId) this.#byToolCall.set(header.parentToolCallId, header.runId);
    this.#link(header.runId, header.parentRunId);
    this.#touch(header.runId);
  }

  /**
   * The page lost the stream of a tree (the server went away) while some of its sub-agent runs were still
   * running: those are shown as interrupted with `reason`, so no spinner turns forever. The root is left
   * to the chat, which says once what happened; a reload reads what the server really recorded.
   */
  markUnfinished(rootRunId: string, reason: string): void {
    const endedAt = Date.now();
    for (const run of this.tree(rootRunId)) {
      if (run.status !== 'running' || run.runId === rootRunId) continue;
      const header = this.#headers.get(run.runId);
      if (header) this.putHeader({ ...header, status: 'interrupted', error: reason, endedAt });
    }
  }

  /**
   * Folds one transient `data-run-event`. An event the page has already folded (the same run's number
   * again, as when a stream that was attached again replays from its start) is left out, so a tool call or
   * a delta never shows twice.
   */
  apply(event: CadreEvent): void {
    const previous = this.#live.get(event.runId);
    const parent = event.parentRunId ? this.#live.get(event.parentRunId) : undefined;
    const folded = foldRun(previous, event, parent);
    if (folded === previous) return;
    this.#live.set(event.runId, folded);
    if (!previous) this.#link(event.runId, event.parentRunId);
    // run-start names the parent's tool call that started it (so the run can sit in that call's place).
    if (event.type === 'run-start' && event.parentToolCallId)
      this.#byToolCall.set(event.parentToolCallId, event.runId);
    if (event.type === 'approval-request')
      this.putApprovals([
        ...this.#approvals.filter((approval) => approval.approvalId !== event.approvalId),
        {
          approvalId: event.approvalId,
          runId: event.runId,
          agent: event.agent,
          toolCallId: event.toolCallId,
          name: event.name,
          input: event.input,
          expiresAt: event.expiresAt,
          path: event.path,
          ...(event.warning ? { warning: event.warning } : {}),
        },
      ]);
    if (event.type === 'approval-result') this.resolveApproval(event.approvalId);
    const answered =
      event.type === 'step-finish'
        ? event.finishReason !== 'tool-calls'
        : event.type === 'run-message' || event.type === 'run-finish' || event.type === 'run-error'
          ? false
          : this.#answered.has(event.runId);
    if (answered !== this.#answered.has(event.runId)) {
      if (answered) this.#answered.add(event.runId);
      else this.#answered.delete(event.runId);
      this.#dirty.add(BACKGROUND);
    }
    this.#touch(event.runId);
  }

  /** Replaces the pending approvals (from `GET /api/approvals` after a reload, or as events arrive). */
  putApprovals(approvals: PendingApproval[]): void {
    this.#approvals = approvals.length ? approvals : NO_APPROVALS;
    this.#touch(APPROVALS);
  }

  /** Drops an approval once it is decided (here or anywhere else). */
  resolveApproval(approvalId: string): void {
    if (!this.#approvals.some((approval) => approval.approvalId === approvalId)) return;
    this.putApprovals(this.#approvals.filter((approval) => approval.approvalId !== approvalId));
  }

  approvals(): readonly PendingApproval[] {
    return this.#approvals;
  }

  /** How many runs the page knows to be running in the background now. */
  backgroundRunning(): number {
    return this.#background.size;
  }

  /**
   * Whether the main agent of the answer under `rootRunId` has answered and waits only for runs of its tree
   * running in the background: a person's message then goes to it at once (it answers it meanwhile).
   */
  waitsForBackground(rootRunId: string): boolean {
    if (!this.#answered.has(rootRunId) || this.get(rootRunId)?.status !== 'running') return false;
    for (const runId of this.#background) if (this.get(runId)?.rootRunId === rootRunId) return true;
    return false;
  }

  /** Whether the person opened the run's card (kept across reloads, in this browser). */
  isOpen(runId: string): boolean {
    this.#open ??= new Set(readOpen());
    return this.#open.has(runId);
  }

  /** Opens or closes a run's card, and remembers it. */
  setOpen(runId: string, open: boolean): void {
    if (this.isOpen(runId) === open) return;
    const kept = this.#open!;
    if (open) kept.add(runId);
    else kept.delete(runId);
    try {
      localStorage.setItem(OPEN_KEY, JSON.stringify([...kept].slice(-OPEN_KEPT)));
    } catch {
      // Storage full or refused (a private window): the card is open for this page only.
    }
    this.#touch(OPEN + runId);
  }

  /**
   * Opens the run's card and those of every run above it, so it can be shown (from the timeline). The
   * root has no card: it is the answer.
   */
  reveal(runId: string): void {
    for (let id: string | null | undefined = runId; id; id = this.get(id)?.parentRunId)
      if (this.get(id)?.parentRunId) this.setOpen(id, true);
  }

  /** The run as shown: header and live fold merged; the same object until the run changes. */
  get(runId: string): RunView | undefined {
    if (!this.#views.has(runId))
      this.#views.set(runId, mergeRun(this.#headers.get(runId), this.#live.get(runId)));
    return this.#views.get(runId);
  }

  /** Child run ids in the order they started; the same array until a child is added. */
  children(runId: string): readonly string[] {
    return this.#children.get(runId) ?? NO_CHILDREN;
  }

  /** The run a tool call started (a delegation), if any. */
  runForToolCall(toolCallId: string): string | undefined {
    return this.#byToolCall.get(toolCallId);
  }

  /** All runs of the tree under `rootRunId`, root first, depth-first. */
  tree(rootRunId: string): RunView[] {
    const runs: RunView[] = [];
    const visit = (runId: string) => {
      const run = this.get(runId);
      if (run) runs.push(run);
      for (const child of this.children(runId)) visit(child);
    };
    visit(rootRunId);
    return runs;
  }

  subscribe(runId: string, listener: Listener): () => void {
    let set = this.#listeners.get(runId);
    if (!set) {
      set = new Set();
      this.#listeners.set(runId, set);
    }
    set.add(listener);
    return () => set.delete(listener);
  }

  /** Delivers pending notifications now (tests; the browser waits for the next frame). */
  flush(): void {
    this.#scheduled = false;
    const dirty = [...this.#dirty];
    this.#dirty.clear();
    for (const runId of dirty) for (const listener of this.#listeners.get(runId) ?? []) listener();
  }

  #link(runId: string, parentRunId: string | null): void {
    if (!parentRunId) return;
    const siblings = this.#children.get(parentRunId) ?? NO_CHILDREN;
    if (siblings.includes(runId)) return;
    this.#children.set(parentRunId, [...siblings, runId]);
    this.#touch(parentRunId);
  }

  #touch(runId: string): void {
    this.#views.delete(runId);
    this.#dirty.add(runId);
    if (this.#headers.get(runId)?.background || this.#live.get(runId)?.background) {
      const running = this.get(runId)?.status === 'running';
      if (running !== this.#background.has(runId)) {
        if (running) this.#background.add(runId);
        else this.#background.delete(runId);
        this.#dirty.add(BACKGROUND);
      }
    }
    if (!this.#scheduled) {
      this.#scheduled = true;
      this.#schedule(() => this.flush());
    }
  }
}

function sameHeader(a: RunPartData, b: RunPartData): boolean {
  return (
    a.status === b.status &&
    a.endedAt === b.endedAt &&
    a.task === b.task &&
    a.summary === b.summary &&
    a.error === b.error &&
    a.text === b.text &&
    a.toolCalls?.length === b.toolCalls?.length &&
    a.usage?.totalTokens === b.usage?.totalTokens &&
    a.subtreeUsage?.totalTokens === b.subtreeUsage?.totalTokens
  );
}

/** One run's view, re-rendering only when that run changes. */
export function useRun(store: RunStore, runId: string): RunView | undefined {
  const subscribe = useCallback((listener: Listener) => store.subscribe(runId, listener), [store, runId]);
  return useSyncExternalStore(subscribe, () => store.get(runId));
}

/** Whether a run's card is open, and a setter that remembers it; re-renders when it changes. */
export function useRunOpen(store: RunStore, runId: string): [boolean, (open: boolean) => void] {
  const subscribe = useCallback(
    (listener: Listener) => store.subscribe(OPEN + runId, listener),
    [store, runId],
  );
  const open = useSyncExternalStore(subscribe, () => store.isOpen(runId));
  return [open, useCallback((next: boolean) => store.setOpen(runId, next), [store, runId])];
}

/** The tool calls waiting for the person, re-rendering when that list changes. */
export function usePendingApprovals(store: RunStore): readonly PendingApproval[] {
  const subscribe = useCallback((listener: Listener) => store.subscribe(APPROVALS, listener), [store]);
  return useSyncExternalStore(subscribe, () => store.approvals());
}

/** How many runs run in the background now, re-rendering when that number changes. */
export function useBackgroundRunning(store: RunStore): number {
  const subscribe = useCallback((listener: Listener) => store.subscribe(BACKGROUND, listener), [store]);
  return useSyncExternalStore(subscribe, () => store.backgroundRunning());
}

/** Whether the main agent under `rootRunId` waits only for its background runs (see `waitsForBackground`). */
export function useWaitsForBackground(store: RunStore, rootRunId: string | undefined): boolean {
  const subscribe = useCallback((listener: Listener) => store.subscribe(BACKGROUND, listener), [store]);
  return useSyncExternalStore(subscribe, () => (rootRunId ? store.waitsForBackground(rootRunId) : false));
}

/** One run's child ids, re-rendering only when that run changes. */
export function useChildren(store: RunStore, runId: string): readonly string[] {
  const subscribe = useCallback((listener: Listener) => store.subscribe(runId, listener), [store, runId]);
  return useSyncExternalStore(subscribe, () => store.children(runId));
}
