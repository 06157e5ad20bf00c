/**
 * Tool calls waiting for the person (writing a file, running a command): what is asked, whole and as it
 * will run (a command with its quotes and newlines, not JSON), by which agent,
 * with its chain of parents and its task, with Allow and Deny, the time left before it is denied on its
 * own, "Allow <tool> for this sub-agent" (a sub-agent asking: later calls of that tool by the same run are
 * allowed as they arrive) and "Allow <tool> in this chat" so five identical calls need one click: while
 * this chat is open, later calls of that tool are allowed as they arrive (each one still recorded as
 * allowed in its run). Only the asking run waits meanwhile.
 */
import { useEffect, useRef, useState } from 'react';
import { apiJson } from '../api/client.ts';
import { InputFields } from './input-fields.tsx';
import type { RunStore } from './run-store.ts';
import { usePendingApprovals } from './run-store.ts';
import { useNow } from './use-now.ts';

export function ApprovalPrompts({ store }: { store: RunStore }) {
  const approvals = usePendingApprovals(store);
  const [error, setError] = useState<string | undefined>();
  // Tools the person allowed for the rest of this chat (this page's chat view; a new chat starts empty).
  const [allowedTools, setAllowedTools] = useState<ReadonlySet<string>>(new Set());
  // Tools the person allowed for one sub-agent (`runId tool`), for the rest of that run.
  const [allowedRuns, setAllowedRuns] = useState<ReadonlySet<string>>(new Set());
  const now = useNow(approvals.length > 0);
  const deciding = useRef(new Set<string>());
  // biome-ignore lint/correctness/useExhaustiveDependencies: decide is recreated each render
  useEffect(() => {
    // A call that may have run already is never allowed on the person's behalf: they read why first.
    for (const approval of approvals) {
      const allowed =
        allowedTools.has(approval.name) || allowedRuns.has(`${approval.runId} ${approval.name}`);
      if (allowed && !approval.warning && !deciding.current.has(approval.approvalId))
        void decide(approval.approvalId, true);
    }
  }, [approvals, allowedTools, allowedRuns]);
  if (approvals.length === 0) return null;
  const decide = async (approvalId: string, approved: boolean) => {
    if (deciding.current.has(approvalId)) return;
    deciding.current.add(approvalId);
    setError(undefined);
    try {
      await apiJson(`/api/approvals/${encodeURIComponent(approvalId)}`, {
        method: 'POST',
        json: approved ? { approved } : { approved, reason: 'Denied by the person in the web app.' },
      });
    } catch (caught) {
      setError((caught as Error).message);
    }
    // Decided here or already elsewhere (404): either way it no longer waits for this page.
    store.resolveApproval(approvalId);
  };
  return (
    <section className="approvals" aria-label="Waiting for your approval">
      {approvals.map((approval) => (
        <div key={approval.approvalId} className="approval">
          <div className="approval-text">
            <strong>{approval.agent}</strong> wants to run <code>{approval.name}</code>:
            <AskedBy path={approval.path} />
            {/* The whole of what will run, as it will run: never escaped, never cut. */}
            <InputFields input={approval.input} label={`What ${approval.name} would run`} />
            {approval.warning && <p className="approval-warning">{approval.warning}</p>}
            <p className="approval-countdown" aria-live="off">
              {countdown(approval.expiresAt - (now || Date.now()))}
            </p>
          </div>
          <div className="approval-actions">
            {approval.path.length > 1 && (
              <button
                type="button"
                className="button small"
                onClick={() =>
                  setAllowedRuns(new Set([...allowedRuns, `${approval.runId} ${approval.name}`]))
                }
              >
                Allow {approval.name} for this sub-agent
              </button>
            )}
            <button
              type="button"
              className="button small"
              onClick={() => setAllowedTools(new Set([...allowedTools, approval.name]))}
            >
              Allow {approval.name} in this chat
            </button>
            <button
              type="button"
              className="button small primary"
              onClick={() => void decide(approval.approvalId, true)}
              aria-label={`Allow ${approval.name} for ${approval.agent}`}
            >
              Allow
            </button>
            <button
              type="button"
              className="button small danger"
              onClick={() => void decide(approval.approvalId, false)}
              aria-label={`Deny ${approval.name} for ${approval.agent}`}
            >
              Deny
            </button>
          </div>
        </div>
      ))}
      {error && (
        <p className="panel-error" role="alert">
          {error}
        </p>
      )}
    </section>
  );
}

/** Who asks: the chain from the main agent down to the asking sub-agent, and the task it was given. */
function AskedBy({ path }: { path: Array<{ runId: string; agent: string; task?: string }> }) {
  const asking = path.at(-1);
  if (!asking || path.length < 2) return null;
  return (
    <p className="approval-who">
      <span className="approval-chain" title="Who asks, under whom">
        {path.map((step) => step.agent).join(' › ')}
      </span>
      {asking.task && (
        <>
          {' · '}
          <span className="approval-task">its task: {asking.task}</span>
        </>
      )}
    </p>
  );
}

/** "Denied on its own in 4:32" for the time left before an unanswered call is denied. */
function countdown(ms: number): string {
  if (ms <= 0) return 'Denied on its own now.';
  const seconds = Math.ceil(ms / 1000);
  return `Denied on its own in ${Math.floor(seconds / 60)}:${String(seconds % 60).padStart(2, '0')}`;
}
