/**
 * Tool calls waiting for the person (writing a file, running a command): what is asked, by which agent,
 * with Allow and Deny. Only the asking run waits; the rest of the tree goes on meanwhile.
 */
import { useState } from 'react';
import { apiJson } from '../api/client.ts';
import { formatValue, truncate } from '../format.ts';
import type { RunStore } from './run-store.ts';
import { usePendingApprovals } from './run-store.ts';

export function ApprovalPrompts({ store }: { store: RunStore }) {
  const approvals = usePendingApprovals(store);
  const [error, setError] = useState<string | undefined>();
  if (approvals.length === 0) return null;
  const decide = async (approvalId: string, approved: boolean) => {
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
            <strong>{approval.agent}</strong> wants to run <code>{approval.name}</code>
            <details>
              <summary>{truncate(JSON.stringify(approval.input ?? {}), 90)}</summary>
              <pre>{formatValue(approval.input)}</pre>
            </details>
          </div>
          <div className="approval-actions">
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
