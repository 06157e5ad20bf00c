import { useState } from 'react';
import type { SessionSummary } from '../api/resources.ts';
import { formatDate } from '../format.ts';
import { TrashIcon } from '../icons.tsx';

/** The person's chats, newest first: open one, delete one (asked twice), or start a new one. */
export function SessionsSidebar({
  sessions,
  currentId,
  error,
  onOpen,
  onNew,
  onDelete,
}: {
  sessions: SessionSummary[];
  currentId: string | undefined;
  error: string | undefined;
  onOpen: (id: string) => void;
  onNew: () => void;
  onDelete: (id: string) => void;
}) {
  const [confirming, setConfirming] = useState<string | undefined>();
  return (
    <nav className="sessions" aria-label="Chats">
      <button type="button" className="button primary new-chat" onClick={onNew}>
        + New chat
      </button>
      {error && (
        <p className="panel-error" role="alert">
          {error}
        </p>
      )}
      {sessions.length === 0 && !error && <p className="muted small-text">No chats yet.</p>}
      <ul>
        {sessions.map((session) => (
          <li key={session.id} className={session.id === currentId ? 'current' : undefined}>
            <a
              href={`/s/${encodeURIComponent(session.id)}`}
              aria-current={session.id === currentId ? 'page' : undefined}
              onClick={(event) => {
                if (event.metaKey || event.ctrlKey || event.shiftKey) return;
                event.preventDefault();
                onOpen(session.id);
              }}
            >
              <span className="session-title">{session.title}</span>
              <span className="session-date">{formatDate(session.updatedAt)}</span>
            </a>
            {confirming === session.id ? (
              <span className="confirm">
                <button
                  type="button"
                  className="button small danger"
                  aria-label={`Confirm deleting chat ${session.title}`}
                  onClick={() => {
                    setConfirming(undefined);
                    onDelete(session.id);
                  }}
                >
                  Delete
                </button>
                <button type="button" className="button small" onClick={() => setConfirming(undefined)}>
                  Keep
                </button>
              </span>
            ) : (
              <button
                type="button"
                className="icon-button"
                aria-label={`Delete chat ${session.title}`}
                title="Delete chat"
                onClick={() => setConfirming(session.id)}
              >
                <TrashIcon />
              </button>
            )}
          </li>
        ))}
      </ul>
    </nav>
  );
}
