/**
 * Tells a screen reader when an answer has arrived: a polite live region, empty while the answer is
 * written (a stream of deltas read aloud would be noise), then "Answer ready." or how it ended when it
 * did not end well. The answer itself is the next thing to read; a failed request announces itself (its
 * notice is an alert). Sighted people see the answer; this region is not shown.
 */
import { useEffect, useRef, useState } from 'react';
import type { CadreMessage } from '../runs/protocol.ts';

export function AnswerAnnouncer({
  messages,
  busy,
  failed,
}: {
  messages: CadreMessage[];
  busy: boolean;
  failed: boolean;
}) {
  const [notice, setNotice] = useState('');
  const wasBusy = useRef(busy);
  useEffect(() => {
    if (busy || failed) setNotice('');
    else if (wasBusy.current) setNotice(announcement(messages.at(-1)));
    wasBusy.current = busy;
  }, [busy, failed, messages]);
  return (
    <p className="visually-hidden" aria-live="polite" aria-atomic="true" data-testid="answer-announcer">
      {notice}
    </p>
  );
}

function announcement(message: CadreMessage | undefined): string {
  if (message?.role !== 'assistant') return '';
  const status = message.metadata?.status;
  if (status && status !== 'ok' && status !== 'running') return `The answer stopped: ${status}.`;
  return 'Answer ready.';
}
