/**
 * Tells a screen reader when an answer has arrived: a polite live region, empty while the answer is
 * written (a stream of deltas read aloud would be noise), then "Answer ready" with its opening words, or
 * how it ended when it did not end well. Sighted people see the answer itself; this region is not shown.
 */
import { useEffect, useRef, useState } from 'react';
import type { CadreMessage } from '../runs/protocol.ts';

/** How much of the answer is read out with the notice; the rest is in the conversation. */
const OPENING_CHARS = 160;

export function AnswerAnnouncer({ messages, busy }: { messages: CadreMessage[]; busy: boolean }) {
  const [notice, setNotice] = useState('');
  const wasBusy = useRef(busy);
  useEffect(() => {
    if (busy) setNotice('');
    else if (wasBusy.current) setNotice(announcement(messages.at(-1)));
    wasBusy.current = busy;
  }, [busy, messages]);
  return (
    <p className="visually-hidden" aria-live="polite" aria-atomic="true" data-testid="answer-announcer">
      {notice}
    </p>
  );
}

function announcement(message: CadreMessage | undefined): string {
  if (message?.role !== 'assistant') return '';
  const status = message.metadata?.status;
  if (status && status !== 'ok' && status !== 'running') return `The answer ended: ${status}.`;
  const text = message.parts
    .map((part) => (part.type === 'text' ? part.text : ''))
    .join(' ')
    .replace(/[#*_`>|[\]]+/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  if (!text) return 'Answer ready.';
  return `Answer ready: ${text.length > OPENING_CHARS ? `${text.slice(0, OPENING_CHARS)}…` : text}`;
}
