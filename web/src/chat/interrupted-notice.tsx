import { useState } from 'react';
import type { InterruptedAnswer } from '../api/resources.ts';

/**
 * An answer the server never finished because its process died (a crash, a restart). Resume continues the
 * tree from its journal on the server: committed model steps and tool results are reused, not redone.
 * `onResume` starts the new attempt and follows it; the notice says so until the answer shows, and shows
 * the server's refusal (already resumed elsewhere, the question since replaced) in its place.
 */
export function InterruptedNotice({
  interrupted,
  onResume,
  hidden = false,
}: {
  interrupted: InterruptedAnswer;
  onResume: (runId: string) => Promise<void>;
  /** Out of sight while an answer streams; kept mounted, so how a resume it started went still shows. */
  hidden?: boolean;
}) {
  const [state, setState] = useState<'idle' | 'resuming' | { error: string }>('idle');
  const resume = async () => {
    setState('resuming');
    try {
      await onResume(interrupted.runId);
    } catch (caught) {
      setState({ error: (caught as Error).message });
    }
  };
  return (
    <div className="notice" role="status" aria-label="Interrupted answer" hidden={hidden}>
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
