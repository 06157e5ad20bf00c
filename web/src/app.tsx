/**
 * The page: the chats on the left, the conversation in the middle, documents and agents in a panel that
 * opens over it. The address names the chat, so a reload or a shared link shows the same conversation.
 */
import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import { AgentsPanel } from './agents/agents-panel.tsx';
import { ModelPicker } from './agents/model-picker.tsx';
import { ApiError, getToken, onUnauthorized, setToken } from './api/client.ts';
import {
  deleteSession,
  downloadSession,
  followSessions,
  getSession,
  getSettings,
  type InterruptedAnswer,
  listAgents,
  listPendingApprovals,
  listSessions,
  type MessageVersion,
  renameSession,
  type SessionSummary,
} from './api/resources.ts';
import { ChatView } from './chat/chat-view.tsx';
import { notifyWhenHidden, useTabTitle } from './chat/tab-title.ts';
import { NotificationsToggle } from './controls/notifications-toggle.tsx';
import { ShortcutsSheet, useShortcuts } from './controls/shortcuts.tsx';
import { DocumentsPanel } from './documents/documents-panel.tsx';
import { CloseIcon, MenuIcon } from './icons.tsx';
import { newSessionId, sessionIdFromLocation, sessionPath } from './routes.ts';
import type { CadreMessage, RunPartData } from './runs/protocol.ts';
import { RunStore } from './runs/run-store.ts';
import { SessionsSidebar } from './sessions/sessions-sidebar.tsx';
import { TokenPrompt } from './setup/token-prompt.tsx';

type Loaded =
  | { state: 'loading'; id: string }
  | {
      state: 'ready';
      id: string;
      messages: CadreMessage[];
      isNew: boolean;
      interrupted?: InterruptedAnswer[];
      versions?: MessageVersion[];
    }
  | { state: 'missing'; id: string; message: string };

type Panel = 'documents' | 'agents';

/** Whether an answer delegated: the server's word when it gives one, else whether its tree had children. */
function delegationUsedBy(message: CadreMessage): boolean {
  if (message.metadata?.delegationUsed !== undefined) return message.metadata.delegationUsed;
  return message.parts.some(
    (part) => part.type === 'data-run' && (part.data as RunPartData).parentRunId !== null,
  );
}

export function App() {
  const store = useMemo(() => new RunStore(), []);
  const [needsToken, setNeedsToken] = useState(false);
  const [tokenRejected, setTokenRejected] = useState(false);
  const [authVersion, setAuthVersion] = useState(0);
  const [sessions, setSessions] = useState<SessionSummary[]>([]);
  const [sessionsError, setSessionsError] = useState<string | undefined>();
  const [loaded, setLoaded] = useState<Loaded>(() => {
    const id = sessionIdFromLocation();
    return id ? { state: 'loading', id } : { state: 'ready', id: newSessionId(), messages: [], isNew: true };
  });
  const [panel, setPanel] = useState<Panel | undefined>();
  const [menuOpen, setMenuOpen] = useState(false);
  const [noModelMessage, setNoModelMessage] = useState<string | undefined>();
  // The main agent's model, shown in the top bar: its own setting, else the configured one.
  const [mainModel, setMainModel] = useState<string | undefined>();
  const refreshModel = useCallback(() => {
    listAgents()
      .then((agents) => setMainModel(agents.find((agent) => agent.name === 'main')?.effectiveModel))
      .catch(() => undefined);
  }, []);
  const [lastDelegationUsed, setLastDelegationUsed] = useState<boolean | undefined>();

  useEffect(
    () =>
      onUnauthorized(() => {
        setTokenRejected(getToken() !== null);
        setNeedsToken(true);
      }),
    [],
  );

  const refreshSessions = useCallback(async () => {
    try {
      const listed = await listSessions();
      // The plain list has no answering marks: those the live list gave are kept until it says otherwise.
      setSessions((shown) =>
        listed.map((session) => {
          const answering = shown.find((each) => each.id === session.id)?.answering;
          return answering === undefined ? session : { ...session, answering };
        }),
      );
      setSessionsError(undefined);
    } catch (caught) {
      if (!(caught instanceof ApiError && caught.status === 401)) setSessionsError((caught as Error).message);
    }
  }, []);

  // The chat list follows what happens anywhere (another tab, a terminal) for as long as the page is open.
  // biome-ignore lint/correctness/useExhaustiveDependencies: followed again after signing in
  useEffect(
    () =>
      followSessions((listed) => {
        setSessions(listed);
        setSessionsError(undefined);
      }),
    [authVersion],
  );

  // biome-ignore lint/correctness/useExhaustiveDependencies: reload everything after signing in
  useEffect(() => {
    void refreshSessions();
    getSettings()
      .then((settings) => setNoModelMessage(settings.model === null ? settings.noModelMessage : undefined))
      .catch(() => undefined);
    listPendingApprovals()
      .then((approvals) => store.putApprovals(approvals))
      .catch(() => undefined);
    refreshModel();
  }, [refreshSessions, authVersion]);

  const open = useCallback(
    async (id: string) => {
      setLoaded({ state: 'loading', id });
      try {
        const session = await getSession(id);
        // Earlier versions' answers keep their run cards too: their headers are known as the current ones'.
        for (const message of [
          ...session.messages,
          ...session.versions.flatMap((version) => version.messages),
        ])
          for (const part of message.parts)
            if (part.type === 'data-run') store.putHeader(part.data as RunPartData);
        // What the Agents panel says of the last answer holds after a reload: from the stored answer.
        const last = session.messages.findLast((message) => message.role === 'assistant');
        setLastDelegationUsed(last ? delegationUsedBy(last) : undefined);
        setLoaded({
          state: 'ready',
          id,
          messages: session.messages,
          isNew: false,
          interrupted: session.interrupted,
          versions: session.versions,
        });
      } catch (caught) {
        if (caught instanceof ApiError && caught.status === 401) return;
        setLoaded({
          state: 'missing',
          id,
          message:
            caught instanceof ApiError && caught.status === 404
              ? 'There is no such chat.'
              : (caught as Error).message,
        });
      }
    },
    [store],
  );

  // biome-ignore lint/correctness/useExhaustiveDependencies: load the chat the address names once, and again after signing in
  useEffect(() => {
    if (loaded.state === 'loading') void open(loaded.id);
  }, [authVersion]);

  useEffect(() => {
    const onPop = () => {
      const id = sessionIdFromLocation();
      if (id) void open(id);
      else setLoaded({ state: 'ready', id: newSessionId(), messages: [], isNew: true });
    };
    window.addEventListener('popstate', onPop);
    return () => window.removeEventListener('popstate', onPop);
  }, [open]);

  // A message to show once its chat opens (a search result).
  const [foundMessage, setFoundMessage] = useState<string | undefined>();
  const navigate = (id: string | undefined, messageId?: string) => {
    setFoundMessage(messageId);
    setMenuOpen(false);
    setLastDelegationUsed(undefined);
    if (id) {
      window.history.pushState(null, '', sessionPath(id));
      void open(id);
    } else {
      window.history.pushState(null, '', '/');
      setLoaded({ state: 'ready', id: newSessionId(), messages: [], isNew: true });
    }
  };

  const remove = async (id: string) => {
    try {
      await deleteSession(id);
    } catch (caught) {
      setSessionsError((caught as Error).message);
    }
    if (id === loaded.id) navigate(undefined);
    await refreshSessions();
  };

  const rename = async (id: string, title: string) => {
    // Shown at once; the list read back afterwards has the title as the server kept it.
    setSessions((listed) => listed.map((session) => (session.id === id ? { ...session, title } : session)));
    try {
      await renameSession(id, title);
    } catch (caught) {
      setSessionsError((caught as Error).message);
    }
    await refreshSessions();
  };

  useTabTitle(store, sessions.find((session) => session.id === loaded.id)?.title);
  const [shortcutsOpen, setShortcutsOpen] = useState(false);
  useShortcuts({
    newChat: () => navigate(undefined),
    searchChats: () => {
      setMenuOpen(true);
      document.querySelector<HTMLInputElement>('input[aria-label="Search chats"]')?.focus();
    },
    showSheet: () => setShortcutsOpen(true),
  });
  const signedIn = getToken() !== null;
  const currentId = useRef(loaded.id);
  currentId.current = loaded.id;

  if (needsToken)
    return (
      <TokenPrompt
        rejected={tokenRejected}
        onSubmit={(token) => {
          setToken(token);
          setNeedsToken(false);
          setAuthVersion((version) => version + 1);
        }}
      />
    );

  return (
    <div className={`app${menuOpen ? ' menu-open' : ''}`}>
      {/* A button, not a link to #conversation: a fragment moves focus only on some browsers, some of the time. */}
      <button
        type="button"
        className="skip-link"
        onClick={() => document.getElementById('conversation')?.focus()}
      >
        Skip to the conversation
      </button>
      <header className="topbar">
        <button
          type="button"
          className="icon-button menu-button"
          aria-label="Chats"
          aria-expanded={menuOpen}
          onClick={() => setMenuOpen(!menuOpen)}
        >
          <MenuIcon />
        </button>
        <h1 className="brand">Cadre</h1>
        <ModelPicker agent="main" current={mainModel} onChosen={setMainModel} />
        <div className="topbar-actions">
          <button type="button" className="button" onClick={() => setPanel('documents')}>
            Documents
          </button>
          <button type="button" className="button" onClick={() => setPanel('agents')}>
            Agents
          </button>
          <button
            type="button"
            className="icon-button shortcuts-button"
            aria-label="Keyboard shortcuts"
            title="Keyboard shortcuts (?)"
            onClick={() => setShortcutsOpen(true)}
          >
            ?
          </button>
          {signedIn && (
            <button
              type="button"
              className="button"
              title="Forget this browser's token and sign in again (with the same or another token)"
              onClick={() => {
                setToken(null);
                setTokenRejected(false);
                setNeedsToken(true);
              }}
            >
              Sign out
            </button>
          )}
        </div>
      </header>
      <aside className="sidebar">
        <SessionsSidebar
          sessions={sessions}
          currentId={loaded.id}
          error={sessionsError}
          onOpen={(id) => navigate(id)}
          onOpenMessage={(id, messageId) => navigate(id, messageId)}
          onNew={() => navigate(undefined)}
          onDelete={(id) => void remove(id)}
          onRename={(id, title) => void rename(id, title)}
          onExport={(id, format) =>
            void downloadSession(id, format).catch((caught: Error) => setSessionsError(caught.message))
          }
        />
        <NotificationsToggle />
      </aside>
      <main className="main" id="conversation" tabIndex={-1}>
        {loaded.state === 'loading' && <p className="muted center">Loading the chat…</p>}
        {loaded.state === 'missing' && (
          <div className="notice notice-error center" role="alert">
            <span>{loaded.message}</span>
            <button type="button" className="button small" onClick={() => navigate(undefined)}>
              New chat
            </button>
          </div>
        )}
        {loaded.state === 'ready' && (
          <ChatView
            key={loaded.id}
            sessionId={loaded.id}
            interrupted={loaded.interrupted ?? []}
            onResumed={() => {
              void open(loaded.id);
              void refreshSessions();
            }}
            initialMessages={loaded.messages}
            initialVersions={loaded.versions ?? []}
            foundMessageId={foundMessage}
            store={store}
            noModelMessage={noModelMessage}
            onFirstMessage={() => {
              if (loaded.isNew) window.history.pushState(null, '', sessionPath(loaded.id));
              // The server creates the session with the message; list it once it exists.
              setTimeout(() => void refreshSessions(), 500);
            }}
            onAnswered={(delegationUsed) => {
              setLastDelegationUsed(delegationUsed);
              notifyWhenHidden(
                'Your answer is ready',
                sessions.find((session) => session.id === loaded.id)?.title ?? 'Cadre',
              );
              void refreshSessions();
            }}
          />
        )}
      </main>
      {shortcutsOpen && <ShortcutsSheet onClose={() => setShortcutsOpen(false)} />}
      {panel && (
        <PanelDialog
          panel={panel}
          onClose={() => {
            setPanel(undefined);
            refreshModel();
          }}
          lastDelegationUsed={lastDelegationUsed}
        />
      )}
    </div>
  );
}

function PanelDialog({
  panel,
  onClose,
  lastDelegationUsed,
}: {
  panel: Panel;
  onClose: () => void;
  lastDelegationUsed: boolean | undefined;
}) {
  const dialog = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const element = dialog.current;
    if (element && !element.open) element.showModal();
  }, []);
  const title = panel === 'documents' ? 'Documents' : 'Agents';
  return (
    <dialog ref={dialog} className="panel" aria-labelledby="panel-title" onClose={onClose}>
      <header className="dialog-header">
        <h2 id="panel-title">{title}</h2>
        <button
          type="button"
          className="icon-button"
          aria-label={`Close ${title.toLowerCase()}`}
          onClick={() => dialog.current?.close()}
        >
          <CloseIcon />
        </button>
      </header>
      {panel === 'documents' ? <DocumentsPanel /> : <AgentsPanel lastDelegationUsed={lastDelegationUsed} />}
    </dialog>
  );
}
