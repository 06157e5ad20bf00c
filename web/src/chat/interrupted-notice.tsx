import { useState } from 'react';
import { type InterruptedAnswer, resumeRun, runStatus } from '../api/resources.ts';

const POLL_MS = 500;

/**
 * An answer the server never finished because its process died (a crash, a restart). Resume continues the
 * tree from its journal on the server: committed model steps and tool results are reused, not redone.
 * The page follows the new attempt until it ends, then reloads the chat, which now holds the answer.
 */
export function InterruptedNotice({
  interrupted,
  onResumed,
}: {
  interrupted: InterruptedAnswer;
  onResumed: () => void;
}) {
  const [state, setState] = useState<'idle' | 'resuming' | { error: string }>('idle');
  const resume = async () => {
    setState('resuming');
    try {
      const runId = await resumeRun(interrupted.runId);
      while ((await runStatus(runId)) === 'running') {
        await new Promise((resolve) => setTimeout(resolve, POLL_MS));
      }
      onResumed();
    } catch (caught) {
      setState({ error: (caught as Error).message });
    }
  };
  return (
    <div className="notice" role="status" aria-label="Interrupted answer">
      <span>
        {state === 'resuming' ? (
          <>
            <span className="spinner small" aria-hidden="true" /> Resuming from where it stopped…
          </>
        ) : (
          <>
            The answer to “{truncate(interrupted.task)}” was interrupted: the server stopped before it
            finished.
            {typeof state === 'object' && <> {state.error}</>}
          </>
        )}
      </span>
      {state !== 'resuming' && (
        <button type="button" className="button small" onClick={() => void resume()}>
          Resume
        </button>
      )}
    </div>
  );
}

function truncate(text: string, max = 80): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}
