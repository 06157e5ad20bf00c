/**
 * Folding a run's events into what the page shows. Live, the server sends each run's header as a
 * persistent `data-run` part (at start and end) and its history as transient `data-run-event` deltas; a
 * stored session's `data-run` parts already carry the folded history. `mergeRun` joins the two, so one
 * component renders both a live run and a reloaded one.
 */
import type { CadreEvent, RunPartData, RunToolCallView } from './protocol.ts';

/** What the transient events of one run have told so far. */
export interface LiveRun {
  runId: string;
  parentRunId: string | null;
  depth: number;
  agent: string;
  task?: string;
  model?: string;
  startedAt?: number;
  endedAt?: number;
  status?: RunPartData['status'];
  summary?: string;
  error?: string;
  text: string;
  reasoning: string;
  toolCalls: RunToolCallView[];
  plan?: RunPartData['plan'];
  /** Sum of the run's model calls so far (before `run-finish` brings the final figure). */
  stepTokens: number;
  /** Model steps finished so far. */
  steps: number;
  events: number;
  /** The provider asked the run to wait and its model call will be tried again (until its next event). */
  retry?: RetryNotice;
}

/** A model call about to be tried again: attempt `attempt` of at most `maxAttempts`, after `delayMs`. */
export interface RetryNotice {
  attempt: number;
  maxAttempts: number;
  delayMs: number;
  reason: string;
}

/** A run as the page shows it: the header, the history, and what is still unknown left out. */
export interface RunView extends RunPartData {
  text: string;
  reasoning: string;
  toolCalls: RunToolCallView[];
  /** Tokens counted so far while the run has no final usage. */
  liveTokens: number;
  /** Model steps (calls) the run has made. */
  steps: number;
  /** Set while a running run's model call waits to be tried again. */
  retry?: RetryNotice;
}

/** Applies one event to a run's live state, returning a new object (React compares by identity). */
export function foldEvent(previous: LiveRun | undefined, event: CadreEvent): LiveRun {
  const run: LiveRun = previous
    ? { ...previous, events: previous.events + 1 }
    : {
        runId: event.runId,
        parentRunId: event.parentRunId,
        depth: event.depth,
        agent: event.agent,
        text: '',
        reasoning: '',
        toolCalls: [],
        stepTokens: 0,
        steps: 0,
        events: 1,
      };
  // A retry is told until the run's next event.
  if (run.retry && event.type !== 'model-retry') delete run.retry;
  switch (event.type) {
    case 'run-start':
      run.task = event.task;
      run.model = event.model;
      run.startedAt = event.time;
      run.status = 'running';
      break;
    case 'text-delta':
      run.text += event.delta;
      break;
    case 'reasoning-delta':
      run.reasoning += event.delta;
      break;
    case 'tool-call':
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
    case 'tool-result':
      run.toolCalls = run.toolCalls.map((call) =>
        call.id === event.toolCallId
          ? {
              ...call,
              ok: event.ok,
              ms: event.ms,
              ...(event.output === undefined ? {} : { output: event.output }),
              ...(event.error === undefined ? {} : { error: event.error }),
            }
          : call,
      );
      break;
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
      run.stepTokens += event.usage.totalTokens;
      run.steps += 1;
      break;
    case 'plan-update':
      run.plan = event.steps;
      break;
    case 'model-retry':
      run.retry = {
        attempt: event.attempt,
        maxAttempts: event.maxAttempts,
        delayMs: event.delayMs,
        reason: event.reason,
      };
      break;
    case 'run-finish':
      run.status = event.status;
      run.summary = event.summary;
      run.endedAt = event.time;
      break;
    case 'run-error':
      run.status = event.status;
      run.error = event.message;
      run.endedAt = event.time;
      break;
  }
  return run;
}

/**
 * Joins a run's persistent header (may be absent for a moment: events can arrive first) and its live
 * fold (absent after a reload). The header wins for the outcome, since it is written when the run ends;
 * the live fold wins for the history, since the header only carries one when it comes from storage.
 */
export function mergeRun(header: RunPartData | undefined, live: LiveRun | undefined): RunView | undefined {
  if (!header && !live) return undefined;
  const ended = header && header.status !== 'running';
  const base: RunPartData = header ?? {
    runId: live!.runId,
    parentRunId: live!.parentRunId,
    rootRunId: live!.runId,
    depth: live!.depth,
    agent: live!.agent,
    task: live!.task ?? '',
    model: live!.model ?? '',
    status: live!.status ?? 'running',
    startedAt: live!.startedAt ?? Date.now(),
  };
  const view: RunView = {
    ...base,
    text: live ? live.text : (header?.text ?? ''),
    reasoning: live?.reasoning ?? '',
    toolCalls:
      live && (live.toolCalls.length > 0 || !header?.toolCalls) ? live.toolCalls : (header?.toolCalls ?? []),
    liveTokens: live?.stepTokens ?? 0,
    steps: Math.max(live?.steps ?? 0, header?.steps ?? 0),
  };
  // On the wire a closing header may leave out a summary that is the end of the streamed text.
  const summaryChars = header?.summaryChars;
  if (view.summary === undefined && summaryChars !== undefined)
    view.summary = summaryChars === 0 ? '' : view.text.trimEnd().slice(-summaryChars);
  const plan = live?.plan ?? header?.plan;
  if (plan) view.plan = plan;
  if (live?.retry && !ended) view.retry = live.retry;
  if (!ended && live?.status && live.status !== 'running') {
    // The run's last event came before its closing header: show the outcome already.
    view.status = live.status;
    if (live.endedAt !== undefined) view.endedAt = live.endedAt;
    if (live.summary !== undefined && view.summary === undefined) view.summary = live.summary;
    if (live.error !== undefined && view.error === undefined) view.error = live.error;
  }
  return view;
}

/** A retry in words: "the provider is busy, retrying 2/4". */
export function retryWords(retry: RetryNotice): string {
  return `the provider is busy, retrying ${retry.attempt}/${retry.maxAttempts}`;
}

/** Total tokens of a run's own work: the final figure when known, else what its steps reported. */
export function runTokens(run: RunView): number {
  return run.usage?.totalTokens ?? run.liveTokens;
}
