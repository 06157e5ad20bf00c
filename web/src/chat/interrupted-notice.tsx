import { useEffect, useState } from 'react';
import { type InterruptedAnswer, type StoredChildRun, storedChildRuns } from '../api/resources.ts';

/**
 * An answer never finished because the process running it ended (a closed terminal, a kill, a crash, a
 * restart), with what its sub-agents had done by then: finished work shows before Resume reuses it. Resume continues the
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
  const [children, setChildren] = useState<StoredChildRun[]>([]);
  useEffect(() => {
    let current = true;
    storedChildRuns(interrupted.runId).then(
      (runs) => {
        if (current) setChildren(runs);
      },
      // The tree could not be read (gone since): the notice still offers Resume.
      () => undefined,
    );
    return () => {
      current = false;
    };
  }, [interrupted.runId]);
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
            The answer to “{truncate(interrupted.task)}” was interrupted: the process running it ended before
            it finished.
            {children.length > 0 && (
              <ul className="interrupted-runs" aria-label="What its sub-agents had done">
                {children.map((child) => (
                  <li key={child.id}>
                    <strong>{child.agent}</strong>{' '}
                    {child.status === 'ok'
                      ? `done${child.summary ? `: ${truncate(child.summary, 140)}` : ''} (kept; Resume reuses it)`
                      : child.status === 'running' || child.status === 'interrupted'
                        ? `interrupted: ${truncate(child.task, 100)}`
                        : `${child.status}: ${truncate(child.task, 100)}`}
                  </li>
                ))}
              </ul>
            )}
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
