/**
 * The browser tab says which chat is open and when something waits for the person ("Approval needed ·
 * Owls at night · Cadre"); while the tab is hidden, a browser notification (when the person allowed them)
 * says that an answer ended or an approval waits, so they need not keep watching the tab.
 */
import { useEffect, useRef } from 'react';
import type { RunStore } from '../runs/run-store.ts';
import { usePendingApprovals } from '../runs/run-store.ts';

/** Sets document.title from the chat's title and the approvals waiting. */
export function useTabTitle(store: RunStore, chatTitle: string | undefined): void {
  const approvals = usePendingApprovals(store);
  const waiting = approvals.length;
  useEffect(() => {
    const parts = [
      waiting ? (waiting === 1 ? 'Approval needed' : `${waiting} approvals needed`) : '',
      chatTitle?.trim() ?? '',
      'Cadre',
    ];
    document.title = parts.filter(Boolean).join(' · ');
  }, [waiting, chatTitle]);
  const notified = useRef(new Set<string>());
  useEffect(() => {
    for (const approval of approvals) {
      if (notified.current.has(approval.approvalId)) continue;
      notified.current.add(approval.approvalId);
      notifyWhenHidden(
        `${approval.agent} wants to run ${approval.name}`,
        'It waits for your approval in Cadre.',
      );
    }
  }, [approvals]);
}

/** Shows a notification when the page is hidden and the person allowed notifications; otherwise nothing. */
export function notifyWhenHidden(title: string, body: string): void {
  if (document.visibilityState !== 'hidden' || typeof Notification === 'undefined') return;
  if (Notification.permission !== 'granted') return;
  new Notification(title, { body, tag: 'cadre' });
}
