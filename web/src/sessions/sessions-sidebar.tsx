import { useState } from 'react';
import type { SessionSummary } from '../api/resources.ts';
import { ConfirmDelete } from '../controls/confirm-delete.tsx';
import { formatDate } from '../format.ts';

/** The person's chats, newest first: find one by its title, open one, delete one (asked twice), or start a new one. */
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
  const [query, setQuery] = useState('');
  const wanted = query.trim().toLocaleLowerCase();
  const shown = wanted
    ? sessions.filter((session) => session.title.toLocaleLowerCase().includes(wanted))
    : sessions;
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
      {sessions.length > 0 && (
        <input
          type="search"
          className="chat-search"
          aria-label="Search chats"
          placeholder="Search chats"
          value={query}
          onChange={(event) => setQuery(event.target.value)}
        />
      )}
      {shown.length === 0 && sessions.length > 0 && (
        <p className="muted small-text">No chat title contains “{query.trim()}”.</p>
      )}
      <ul>
        {shown.map((session) => (
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
            <ConfirmDelete what={`chat ${session.title}`} onDelete={() => onDelete(session.id)} />
          </li>
        ))}
      </ul>
    </nav>
  );
}
