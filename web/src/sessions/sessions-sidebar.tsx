import { type KeyboardEvent, useEffect, useId, useRef, useState } from 'react';
import { type MessageMatch, type SessionSummary, searchMessages } from '../api/resources.ts';
import { ConfirmDelete } from '../controls/confirm-delete.tsx';
import { formatDate } from '../format.ts';
import { MoreIcon } from '../icons.tsx';

export type ExportFormat = 'md' | 'json';

/**
 * The person's chats, newest first: find one by its title, open one, rename or export one (its ⋯ button),
 * delete one (asked twice), or start a new one.
 */
export function SessionsSidebar({
  sessions,
  currentId,
  error,
  onOpen,
  onNew,
  onDelete,
  onRename,
  onExport,
  onOpenMessage,
}: {
  sessions: SessionSummary[];
  currentId: string | undefined;
  error: string | undefined;
  onOpen: (id: string) => void;
  onNew: () => void;
  onDelete: (id: string) => void;
  onRename: (id: string, title: string) => void;
  onExport: (id: string, format: ExportFormat) => void;
  /** Opens a chat at one of its messages (a search result). */
  onOpenMessage?: (sessionId: string, messageId: string) => void;
}) {
  const [query, setQuery] = useState('');
  const matches = useMessageSearch(query);
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
      {shown.length === 0 && sessions.length > 0 && !matches?.length && (
        <p className="muted small-text">No chat says “{query.trim()}”.</p>
      )}
      {matches && matches.length > 0 && (
        <section className="chat-group" aria-label="In messages">
          <h2 className="chat-group-label">In messages</h2>
          <ul className="message-matches">
            {matches.map((match) => (
              <li key={`${match.sessionId}/${match.messageId}`}>
                <a
                  href={`/s/${encodeURIComponent(match.sessionId)}`}
                  onClick={(event) => {
                    if (event.metaKey || event.ctrlKey || event.shiftKey) return;
                    event.preventDefault();
                    onOpenMessage?.(match.sessionId, match.messageId);
                  }}
                >
                  <span className="session-title">{match.sessionTitle}</span>
                  <span className="match-line">
                    {match.role === 'user' ? 'You: ' : ''}
                    {match.line}
                  </span>
                </a>
              </li>
            ))}
          </ul>
        </section>
      )}
      {groupByDate(shown).map(({ label, sessions: grouped }) => (
        <section key={label} className="chat-group" aria-label={label}>
          <h2 className="chat-group-label">{label}</h2>
          <ul>
            {grouped.map((session) => (
              <SessionItem
                key={session.id}
                session={session}
                current={session.id === currentId}
                onOpen={() => onOpen(session.id)}
                onDelete={() => onDelete(session.id)}
                onRename={(title) => onRename(session.id, title)}
                onExport={(format) => onExport(session.id, format)}
              />
            ))}
          </ul>
        </section>
      ))}
    </nav>
  );
}

/** The caller's messages matching what is typed in the search box (from two characters, as they type). */
function useMessageSearch(query: string): MessageMatch[] | undefined {
  const [matches, setMatches] = useState<MessageMatch[] | undefined>();
  const wanted = query.trim();
  useEffect(() => {
    if (wanted.length < 2) {
      setMatches(undefined);
      return;
    }
    const stop = new AbortController();
    const timer = setTimeout(() => {
      searchMessages(wanted, stop.signal).then(setMatches, () => {
        if (!stop.signal.aborted) setMatches([]);
      });
    }, 200);
    return () => {
      clearTimeout(timer);
      stop.abort();
    };
  }, [wanted]);
  return matches;
}

/** Today, Yesterday, Previous 7 days, Previous 30 days, then by month ("October 2026"). */
export function dateGroup(time: number | undefined, now = new Date()): string {
  if (time === undefined) return 'Older';
  const day = (date: Date) => new Date(date.getFullYear(), date.getMonth(), date.getDate()).getTime();
  const days = Math.round((day(now) - day(new Date(time))) / 86_400_000);
  if (days <= 0) return 'Today';
  if (days === 1) return 'Yesterday';
  if (days < 7) return 'Previous 7 days';
  if (days < 30) return 'Previous 30 days';
  return new Date(time).toLocaleDateString(undefined, { month: 'long', year: 'numeric' });
}

/** The chats in their date groups, in the list's order (newest first). */
function groupByDate(sessions: SessionSummary[]): Array<{ label: string; sessions: SessionSummary[] }> {
  const groups: Array<{ label: string; sessions: SessionSummary[] }> = [];
  for (const session of sessions) {
    const label = dateGroup(session.updatedAt);
    const group = groups.at(-1);
    if (group?.label === label) group.sessions.push(session);
    else groups.push({ label, sessions: [session] });
  }
  return groups;
}

/**
 * One chat of the list. Its ⋯ button opens its actions below it (Rename, Export as Markdown or JSON);
 * Rename turns its title into a text box in place: Enter saves, Esc leaves it as it was. Focus goes to
 * what appeared, and back to the ⋯ button when it goes away.
 */
function SessionItem({
  session,
  current,
  onOpen,
  onDelete,
  onRename,
  onExport,
}: {
  session: SessionSummary;
  current: boolean;
  onOpen: () => void;
  onDelete: () => void;
  onRename: (title: string) => void;
  onExport: (format: ExportFormat) => void;
}) {
  const [mode, setMode] = useState<'idle' | 'actions' | 'renaming'>('idle');
  const [draft, setDraft] = useState(session.title);
  const more = useRef<HTMLButtonElement>(null);
  const firstAction = useRef<HTMLButtonElement>(null);
  const titleBox = useRef<HTMLInputElement>(null);
  const returnFocus = useRef(false);
  const actionsId = useId();
  useEffect(() => {
    if (mode === 'actions') firstAction.current?.focus();
    else if (mode === 'renaming') titleBox.current?.select();
    else if (returnFocus.current) more.current?.focus();
    returnFocus.current = false;
  }, [mode]);
  const close = () => {
    returnFocus.current = true;
    setMode('idle');
  };
  const closeOnEscape = (event: KeyboardEvent) => {
    if (event.key !== 'Escape') return;
    event.preventDefault();
    event.stopPropagation();
    close();
  };
  const save = () => {
    const title = draft.replace(/\s+/g, ' ').trim();
    if (title && title !== session.title) onRename(title);
    close();
  };
  return (
    <li className={current ? 'current' : undefined}>
      {mode === 'renaming' ? (
        <form
          className="rename-form"
          onSubmit={(event) => {
            event.preventDefault();
            save();
          }}
        >
          <input
            ref={titleBox}
            type="text"
            aria-label={`New title for chat ${session.title}`}
            maxLength={200}
            value={draft}
            onChange={(event) => setDraft(event.target.value)}
            onKeyDown={closeOnEscape}
          />
          <div className="rename-actions">
            <button type="button" className="button small" onClick={close}>
              Cancel
            </button>
            <button type="submit" className="button small primary" disabled={!draft.trim()}>
              Save
            </button>
          </div>
        </form>
      ) : (
        <>
          <a
            href={`/s/${encodeURIComponent(session.id)}`}
            aria-current={current ? 'page' : undefined}
            onClick={(event) => {
              if (event.metaKey || event.ctrlKey || event.shiftKey) return;
              event.preventDefault();
              onOpen();
            }}
          >
            <span className="session-title">
              {session.answering && (
                <span className="session-answering" role="img" aria-label="answering">
                  <span className="spinner small" />
                </span>
              )}
              {session.title}
            </span>
            <span className="session-date">{formatDate(session.updatedAt)}</span>
          </a>
          <button
            ref={more}
            type="button"
            className="icon-button chat-more-button"
            aria-label={`More for chat ${session.title}`}
            title="Rename or export"
            aria-expanded={mode === 'actions'}
            aria-controls={mode === 'actions' ? actionsId : undefined}
            onClick={() => (mode === 'actions' ? close() : setMode('actions'))}
          >
            <MoreIcon />
          </button>
          <ConfirmDelete what={`chat ${session.title}`} onDelete={onDelete} />
        </>
      )}
      {mode === 'actions' && (
        // biome-ignore lint/a11y/useSemanticElements: a group of buttons, not a form's fieldset
        <div
          id={actionsId}
          className="chat-actions"
          role="group"
          aria-label={`Chat ${session.title}`}
          onKeyDown={closeOnEscape}
        >
          <button
            ref={firstAction}
            type="button"
            className="button small"
            onClick={() => {
              setDraft(session.title);
              setMode('renaming');
            }}
          >
            Rename
          </button>
          <button
            type="button"
            className="button small"
            aria-label={`Export chat ${session.title} as Markdown`}
            onClick={() => {
              onExport('md');
              close();
            }}
          >
            Export .md
          </button>
          <button
            type="button"
            className="button small"
            aria-label={`Export chat ${session.title} as JSON`}
            onClick={() => {
              onExport('json');
              close();
            }}
          >
            Export .json
          </button>
        </div>
      )}
    </li>
  );
}
