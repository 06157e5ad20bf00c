/**
 * The whole run tree of one answer as a timeline: one row per run from its start to its end, indented by
 * depth, so parallel siblings and the slow run show at a glance. Each row says what the run was asked
 * (its task and any other input), how many model steps and which tool calls it made, its time and usage;
 * choosing a row closes the timeline and opens that run's card in the conversation.
 */
import { useEffect, useRef } from 'react';
import { formatCost, formatDuration, formatTokens, truncate } from '../format.ts';
import { CloseIcon } from '../icons.tsx';
import type { RunView } from './run-fold.ts';
import { runTokens } from './run-fold.ts';
import { inputsOf } from './run-inputs.ts';
import type { RunStore } from './run-store.ts';
import { STATUS_LABELS, StatusIcon } from './status-icon.tsx';
import { useNow } from './use-now.ts';

/** One of the main agent's tool calls, from the answer's tool parts. */
export interface RootCall {
  id: string;
  name: string;
  input: unknown;
}

export function RunInspector({
  store,
  rootRunId,
  rootCalls = [],
  onClose,
  onOpenRun,
}: {
  store: RunStore;
  rootRunId: string;
  /** The main agent's tool calls: live, they travel as the message's tool parts, not as run events. */
  rootCalls?: RootCall[];
  onClose: () => void;
  /** Shows a run in the conversation (the timeline closes first). */
  onOpenRun?: (runId: string) => void;
}) {
  const dialog = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const element = dialog.current;
    if (element && !element.open) element.showModal();
  }, []);
  const runs = store.tree(rootRunId);
  const running = runs.some((run) => run.status === 'running');
  const now = useNow(running) || Date.now();
  const start = Math.min(...runs.map((run) => run.startedAt));
  const end = Math.max(...runs.map((run) => run.endedAt ?? now));
  const span = Math.max(1, end - start);
  const root = runs[0];
  const treeTokens = root?.subtreeUsage?.totalTokens ?? runs.reduce((sum, run) => sum + runTokens(run), 0);
  const open = (runId: string) => {
    dialog.current?.close();
    onOpenRun?.(runId);
  };
  return (
    <dialog ref={dialog} className="inspector" aria-labelledby="inspector-title" onClose={onClose}>
      <header className="dialog-header">
        <h2 id="inspector-title">Run timeline</h2>
        <button
          type="button"
          className="icon-button"
          aria-label="Close run timeline"
          onClick={() => dialog.current?.close()}
        >
          <CloseIcon />
        </button>
      </header>
      <p className="inspector-summary">
        {runs.length} {runs.length === 1 ? 'run' : 'runs'} · {formatDuration(span)} ·{' '}
        {formatTokens(treeTokens)}
        {root?.subtreeCost ? ` · ${formatCost(root.subtreeCost)}` : ''} for the tree
      </p>
      <ol className="timeline" aria-label="Runs">
        {runs.map((run) => {
          const left = ((run.startedAt - start) / span) * 100;
          const width = Math.max(0.6, (((run.endedAt ?? now) - run.startedAt) / span) * 100);
          const parentCall = run.parentToolCallId;
          const inputs = inputsOf(
            (
              rootCalls.find((call) => call.id === parentCall) ??
              store.get(run.parentRunId ?? '')?.toolCalls.find((call) => call.id === parentCall)
            )?.input,
          );
          const calls = run.parentRunId === null && run.toolCalls.length === 0 ? rootCalls : run.toolCalls;
          return (
            <li key={run.runId}>
              <button
                type="button"
                className="timeline-row"
                aria-label={`Open ${run.agent} run: ${STATUS_LABELS[run.status]}. ${truncate(run.task, 120)}`}
                onClick={() => open(run.runId)}
              >
                <span className="timeline-label" style={{ paddingInlineStart: `${run.depth * 14}px` }}>
                  <StatusIcon status={run.status} />
                  <span className="run-agent">{run.agent}</span>
                </span>
                <span className="timeline-track">
                  <span
                    className={`timeline-bar bar-${run.status}`}
                    style={{ left: `${left}%`, width: `${Math.min(width, 100 - left)}%` }}
                    title={`${run.agent}: ${STATUS_LABELS[run.status]}, ${formatDuration((run.endedAt ?? now) - run.startedAt)}`}
                  />
                </span>
                <span className="timeline-task">{truncate(run.task, 160)}</span>
                {Object.keys(inputs).length > 0 && (
                  <span className="timeline-inputs">
                    {Object.entries(inputs).map(([name, value]) => (
                      <span key={name}>
                        {name}: {truncate(typeof value === 'string' ? value : JSON.stringify(value), 60)}
                      </span>
                    ))}
                  </span>
                )}
                <span className="timeline-figures">
                  {[
                    formatDuration((run.endedAt ?? now) - run.startedAt),
                    stepsText(run),
                    toolCallsText(calls),
                  ]
                    .filter(Boolean)
                    .join(' · ')}{' '}
                  · {formatTokens(runTokens(run))}
                  {run.cost ? ` · ${formatCost(run.cost)}` : ''}
                  {run.subtreeUsage && run.subtreeUsage.totalTokens !== runTokens(run)
                    ? ` (${formatTokens(run.subtreeUsage.totalTokens)}${run.subtreeCost ? ` · ${formatCost(run.subtreeCost)}` : ''} with sub-agents)`
                    : ''}
                </span>
              </button>
            </li>
          );
        })}
      </ol>
    </dialog>
  );
}

/** "2 steps"; nothing for a finished run with none counted (an answer stored before steps were). */
function stepsText(run: RunView): string {
  if (run.steps === 0 && run.status !== 'running') return '';
  return `${run.steps} ${run.steps === 1 ? 'step' : 'steps'}`;
}

/** "no tool calls", "1 tool call: calculate", "3 tool calls: calculate ×2, web_fetch". */
function toolCallsText(calls: ReadonlyArray<{ name: string }>): string {
  const count = calls.length;
  if (count === 0) return 'no tool calls';
  const byName = new Map<string, number>();
  for (const call of calls) byName.set(call.name, (byName.get(call.name) ?? 0) + 1);
  const names = [...byName].map(([name, times]) => (times > 1 ? `${name} ×${times}` : name)).join(', ');
  return `${count} ${count === 1 ? 'tool call' : 'tool calls'}: ${names}`;
}
