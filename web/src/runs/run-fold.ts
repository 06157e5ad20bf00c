/**
 * A run as the page shows it. The fold of a run's events is the server's own (`foldRun` in
 * src/core/run-view.ts, imported here, not rewritten), and so is the shape (`RunView`). Live, the server
 * sends each run's header as a persistent `data-run` part (at start and end) and its history as transient
 * `data-run-event` deltas, which the page folds; a stored session's `data-run` parts already carry the
 * folded history. `mergeRun` joins the two, so one component renders both a live run and a reloaded one.
 */
import { foldRun } from '../../../src/core/run-view.ts';
import type { RetryNotice, RunPartData, RunView } from './protocol.ts';

export type { RetryNotice, RunView };
export { foldRun };

/**
 * Joins a run's persistent header (may be absent for a moment: events can arrive first) and its live
 * fold (absent after a reload). The header wins for the outcome, since it is written when the run ends;
 * the live fold wins for the history, since the header only carries one when it comes from storage.
 */
export function mergeRun(header: RunPartData | undefined, live: RunView | undefined): RunView | undefined {
  if (!header && !live) return undefined;
  const ended = header && header.status !== 'running';
  const view: RunView = {
    ...(live ?? {
      startedAt: Date.now(),
      stepUsage: { inputTokens: 0, outputTokens: 0, totalTokens: 0 },
      steps: 0,
      text: '',
      reasoning: '',
      toolCalls: [],
      lastSeq: -1,
    }),
    ...(header ? headerFields(header) : {}),
  } as RunView;
  view.text = live ? live.text : (header?.text ?? '');
  view.toolCalls =
    live && (live.toolCalls.length > 0 || !header?.toolCalls) ? live.toolCalls : (header?.toolCalls ?? []);
  view.steps = Math.max(live?.steps ?? 0, header?.steps ?? 0);
  // On the wire a closing header may leave out a summary that is the end of the streamed text.
  const summaryChars = header?.summaryChars;
  if (view.summary === undefined && summaryChars !== undefined)
    view.summary = summaryChars === 0 ? '' : view.text.trimEnd().slice(-summaryChars);
  const plan = live?.plan ?? header?.plan;
  if (plan) view.plan = plan;
  const messages = live?.messages ?? header?.messages;
  if (messages) view.messages = messages;
  if (ended || !live?.retry) delete view.retry;
  if (!ended && live) {
    // The run's last event came before its closing header: show the outcome already.
    if (live.status !== 'running') {
      view.status = live.status;
      if (live.endedAt !== undefined) view.endedAt = live.endedAt;
      if (live.summary !== undefined && view.summary === undefined) view.summary = live.summary;
      if (live.error !== undefined && view.error === undefined) view.error = live.error;
    } else if (live.stopping) {
      view.status = live.stopping.status;
      view.endedAt = live.stopping.time;
      if (live.error !== undefined && view.error === undefined) view.error = live.error;
    }
  }
  return view;
}

/** A header's own fields (its history and wire-only fields are merged apart). */
function headerFields(header: RunPartData): Partial<RunView> {
  const {
    summaryChars: _chars,
    text: _text,
    toolCalls: _calls,
    plan: _plan,
    steps: _steps,
    ...fields
  } = header;
  return fields;
}

/** A retry in words: "the provider is busy, retrying 2/4". */
export function retryWords(retry: RetryNotice): string {
  return `the provider is busy, retrying ${retry.attempt}/${retry.maxAttempts}`;
}

/** Total tokens of a run's own work: the final figure when known, else what its steps reported. */
export function runTokens(run: RunView): number {
  return run.usage?.totalTokens ?? run.stepUsage.totalTokens;
}
