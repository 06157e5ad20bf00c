/**
 * "Ask research a follow-up" on a finished sub-agent's card: the person's message continues that run from
 * its own conversation, as a new turn of the chat that its agent answers (`POST /api/runs/:id/messages` on
 * a finished run; app/follow-up.ts). The chat follows the new turn live, as it follows any running answer.
 */
import { createContext, useContext, useId, useState } from 'react';
import { messageRun } from '../api/resources.ts';

/** What the chat does with a follow-up: starts it, then shows its turn live. Absent: it is only started. */
export const FollowUpContext = createContext<((runId: string, text: string) => Promise<void>) | undefined>(
  undefined,
);

/** The answer of `POST /api/runs/:id/messages` on a finished run: the follow-up's tree. */
export interface StartedFollowUp {
  runId: string;
  continues: string;
  sessionId: string;
  answerId: string;
}

/** Starts the follow-up of run `runId` (202): its tree runs on the server whether or not anyone follows it. */
export function startFollowUp(runId: string, text: string): Promise<StartedFollowUp> {
  return messageRun<StartedFollowUp>(runId, text);
}

export function FollowUpBox({ runId, agent }: { runId: string; agent: string }) {
  const followUp = useContext(FollowUpContext);
  const [open, setOpen] = useState(false);
  const [text, setText] = useState('');
  const [sending, setSending] = useState(false);
  const [error, setError] = useState<string | undefined>();
  const inputId = useId();
  const send = async () => {
    const said = text.trim();
    if (!said || sending) return;
    setSending(true);
    setError(undefined);
    try {
      if (followUp) await followUp(runId, said);
      else await startFollowUp(runId, said);
      setText('');
      setOpen(false);
    } catch (failure) {
      setError(failure instanceof Error ? failure.message : String(failure));
    } finally {
      setSending(false);
    }
  };
  return (
    <div className="run-field run-follow-up">
      {!open ? (
        <button type="button" className="button small" onClick={() => setOpen(true)}>
          Ask {agent} a follow-up
        </button>
      ) : (
        <form
          className="run-say"
          onSubmit={(event) => {
            event.preventDefault();
            void send();
          }}
        >
          <label htmlFor={inputId} className="visually-hidden">
            Follow-up to {agent}
          </label>
          <input
            id={inputId}
            value={text}
            // biome-ignore lint/a11y/noAutofocus: the person just asked for this box
            autoFocus
            placeholder={`Ask ${agent} more: it goes on from what it found`}
            maxLength={20_000}
            onChange={(event) => setText(event.target.value)}
            onKeyDown={(event) => {
              if (event.key === 'Escape') {
                event.preventDefault();
                event.stopPropagation();
                setOpen(false);
              }
            }}
          />
          <button type="submit" className="button small" disabled={sending || !text.trim()}>
            {sending ? 'Asking…' : 'Ask'}
          </button>
        </form>
      )}
      {error && (
        <p className="run-error-message" role="alert">
          {error}
        </p>
      )}
    </div>
  );
}
