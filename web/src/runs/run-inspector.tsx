/**
 * The whole run tree of one answer as a timeline: one bar per run from its start to its end, indented by
 * depth, so parallel siblings and the slow run show at a glance; usage per run and for the tree.
 */
import { useEffect, useRef } from 'react';
import { formatDuration, formatTokens } from '../format.ts';
import { CloseIcon } from '../icons.tsx';
import { runTokens } from './run-fold.ts';
import type { RunStore } from './run-store.ts';
import { STATUS_LABELS, StatusIcon } from './status-icon.tsx';
import { useNow } from './use-now.ts';

export function RunInspector({
  store,
  rootRunId,
  onClose,
}: {
  store: RunStore;
  rootRunId: string;
  onClose: () => void;
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
        {formatTokens(treeTokens)} for the tree
      </p>
      <ol className="timeline" aria-label="Runs">
        {runs.map((run) => {
          const left = ((run.startedAt - start) / span) * 100;
          const width = Math.max(0.6, (((run.endedAt ?? now) - run.startedAt) / span) * 100);
          return (
            <li key={run.runId} className="timeline-row">
              <div className="timeline-label" style={{ paddingInlineStart: `${run.depth * 14}px` }}>
                <StatusIcon status={run.status} />
                <span className="run-agent">{run.agent}</span>
              </div>
              <div className="timeline-track">
                <div
                  className={`timeline-bar bar-${run.status}`}
                  style={{ left: `${left}%`, width: `${Math.min(width, 100 - left)}%` }}
                  title={`${run.agent}: ${STATUS_LABELS[run.status]}, ${formatDuration((run.endedAt ?? now) - run.startedAt)}`}
                />
              </div>
              <div className="timeline-figures">
                {formatDuration((run.endedAt ?? now) - run.startedAt)} · {formatTokens(runTokens(run))}
                {run.subtreeUsage && run.subtreeUsage.totalTokens !== runTokens(run)
                  ? ` (${formatTokens(run.subtreeUsage.totalTokens)} with sub-agents)`
                  : ''}
              </div>
            </li>
          );
        })}
      </ol>
    </dialog>
  );
}
