/**
 * The conversation of one session through `useChat`: persistent `data-run` parts and transient
 * `data-run-event` parts both go to the run store as they arrive; Stop cancels the answering tree on the
 * server (closing the page never does); errors show where they happened, with a retry.
 */
import { useChat } from '@ai-sdk/react';
import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import {
  apiFetch,
  authHeaders,
  fetchAskingForToken,
  isNetworkFailure,
  unreachableMessage,
} from '../api/client.ts';
import type { InterruptedAnswer, MessageVersion } from '../api/resources.ts';
import { getSession, messageRun, restoreVersion, resumeRun } from '../api/resources.ts';
import { ApprovalPrompts } from '../runs/approval-prompts.tsx';
import { BackgroundCount } from '../runs/background-count.tsx';
import { FollowUpContext, startFollowUp } from '../runs/follow-up.tsx';
import type { AttachmentData, CadreEvent, CadreMessage, RunPartData } from '../runs/protocol.ts';
import { runElementId } from '../runs/run-card.tsx';
import { type RootCall, RunInspector } from '../runs/run-inspector.tsx';
import { type RunStore, useWaitsForBackground } from '../runs/run-store.ts';
import { SetupNotice } from '../setup/setup-notice.tsx';
import { AnswerAnnouncer } from './answer-announcer.tsx';
import { attachmentsOf, PendingAttachments, useAttachments } from './attachments.tsx';
import { CadreChatTransport } from './chat-transport.ts';
import { Composer } from './composer.tsx';
import { InterruptedNotice } from './interrupted-notice.tsx';
import { answerElementId, MessageView, rootRunIdOf } from './message-view.tsx';
import { useFollow } from './use-follow.ts';
import {
  type ChosenVersions,
  replacedVersion,
  shownMessages,
  shownVersionIds,
  versionKey,
} from './versions.ts';

/** How often, and how many times, a page looks for the answer to a question that has none yet. */
const ATTACH_LOOK_MS = 1000;
const ATTACH_LOOKS = 10;

/** The message of a failed chat request: the server's JSON error when it sent one. */
export function chatErrorMessage(error: Error): { message: string; code?: string } {
  try {
    const body = JSON.parse(error.message) as { error?: { message?: string; code?: string } | string };
    if (typeof body.error === 'string') return { message: body.error };
    if (body.error?.message)
      return { message: body.error.message, ...(body.error.code ? { code: body.error.code } : {}) };
  } catch {
    // Not JSON.
  }
  // The server went away (or never answered): said as the sidebar says it, not as the browser does.
  if (isNetworkFailure(error.message))
    return { message: unreachableMessage(error.message), code: 'unreachable' };
  return { message: error.message || 'The answer failed.' };
}

/** An answer's own tool calls (the main agent's: they travel as the message's tool parts, not as events). */
function rootCallsOf(message: CadreMessage | undefined): RootCall[] {
  const calls: RootCall[] = [];
  for (const part of message?.parts ?? [])
    if (part.type === 'dynamic-tool' || part.type.startsWith('tool-')) {
      const tool = part as { toolCallId?: string; toolName?: string; input?: unknown };
      if (tool.toolCallId)
        calls.push({
          id: tool.toolCallId,
          name: tool.toolName ?? part.type.replace(/^tool-/, ''),
          input: tool.input,
        });
    }
  return calls;
}

/**
 * Shows a run in the conversation: its card and every card above it open, scrolled to and focused; the
 * root run is its answer. The cards appear over the next frames (the run store notifies once a frame).
 */
function showRun(store: RunStore, runId: string) {
  const run = store.get(runId);
  const isRoot = !run?.parentRunId;
  if (!isRoot) store.reveal(runId);
  const id = isRoot ? answerElementId(runId) : runElementId(runId);
  const reduced = window.matchMedia('(prefers-reduced-motion: reduce)').matches;
  let frames = 0;
  const look = () => {
    const element = document.getElementById(id);
    if (!element) {
      if (++frames < 60) requestAnimationFrame(look);
      return;
    }
    // Only the conversation scrolls (scrollIntoView would move the page around it too, on a phone).
    const scroller = element.closest<HTMLElement>('.messages');
    if (scroller) {
      const top =
        element.getBoundingClientRect().top - scroller.getBoundingClientRect().top + scroller.scrollTop - 12;
      scroller.scrollTo({ top: Math.max(0, top), behavior: reduced ? 'auto' : 'smooth' });
    }
    const target = isRoot ? element : element.querySelector<HTMLElement>('.run-header');
    if (isRoot) element.tabIndex = -1;
    target?.focus({ preventScroll: true });
  };
  requestAnimationFrame(look);
}

/** A question as the person sent it: its text and the documents attached to it. */
interface Question {
  text: string;
  attachments: AttachmentData[];
}

/** A question's message parts: its text, then a `data-attachment` part per attached document. */
function questionParts(question: Question): CadreMessage['parts'] {
  return [
    { type: 'text', text: question.text },
    ...question.attachments.map((data) => ({ type: 'data-attachment' as const, data })),
  ];
}

/** How following a resumed answer went: to its end, broken off, or nothing to follow (it had ended). */
interface Following {
  runId: string;
  outcome: 'none' | 'ended' | 'failed';
}

export function ChatView({
  sessionId,
  initialMessages,
  store,
  noModelMessage,
  onFirstMessage,
  onAnswered,
  interrupted = [],
  onResumed,
  foundMessageId,
  initialVersions = [],
}: {
  sessionId: string;
  initialMessages: CadreMessage[];
  /** Earlier versions of the chat's answers (regenerated or edited), as the server keeps them. */
  initialVersions?: MessageVersion[];
  store: RunStore;
  /** Set when the server has no model: the page explains how to set one instead of failing on send. */
  noModelMessage?: string | undefined;
  onFirstMessage: () => void;
  onAnswered: (delegationUsed: boolean) => void;
  /** Questions whose answer the server's process never finished (it died); each can be resumed. */
  interrupted?: InterruptedAnswer[];
  /** A resumed answer ended before the page could follow it: the chat is read again, where it is stored. */
  onResumed?: () => void;
  /** A message to show when the chat opens (found by the chat list's search). */
  foundMessageId?: string | undefined;
}) {
  const liveRoot = useRef<string | undefined>(undefined);
  const scroller = useRef<HTMLDivElement>(null);
  const content = useRef<HTMLDivElement>(null);
  // "Jump to latest" shows while the answer grows below the part the person scrolled back to.
  const { away: awayFromLatest, jumpToLatest, release } = useFollow(scroller, content);
  /** A resumed answer being followed, and how following it has gone so far. */
  const following = useRef<Following | undefined>(undefined);
  /** The answer last told to be finished: a stream that ends twice (a resumed one and the chat's) tells once. */
  const answered = useRef<string | undefined>(undefined);
  const [resumed, setResumed] = useState<ReadonlySet<string>>(() => new Set());
  const mounted = useRef(true);
  useEffect(
    () => () => {
      mounted.current = false;
    },
    [],
  );
  const [inspecting, setInspecting] = useState<string | undefined>();
  // Earlier versions: the server's, and those this page's regenerates and edits made since it opened (the
  // server keeps the same ones; they are read from it on the next load).
  const [versions, setVersions] = useState<MessageVersion[]>(initialVersions);
  const [chosen, setChosen] = useState<ChosenVersions>({});
  const [versionError, setVersionError] = useState<string | undefined>();
  /** No worker has taken the question from the queue yet (runs as jobs): the server's word for it. */
  const [waitingWorker, setWaitingWorker] = useState<string | undefined>();
  const transport = useMemo(
    () =>
      new CadreChatTransport({ api: '/api/chat', headers: () => authHeaders(), fetch: fetchAskingForToken }),
    [],
  );
  const { messages, sendMessage, regenerate, status, error, stop, clearError, setMessages, resumeStream } =
    useChat<CadreMessage>({
      id: sessionId,
      messages: initialMessages,
      transport,
      // An answer still being written when the page opens (a reload, a chat switch, a second tab, a terminal's
      // `cadre chat`) is attached to: replayed from its start, then followed live until it ends.
      resume: true,
      throttle: 50,
      onData: (part) => {
        if (part.type === 'data-run') {
          const header = part.data as RunPartData;
          store.putHeader(header);
          if (header.parentRunId === null) liveRoot.current = header.runId;
        } else if (part.type === 'data-run-event') store.apply(part.data as CadreEvent);
        else if (part.type === 'data-queued') {
          const queued = part.data as { message: string; rootRunId?: string };
          setWaitingWorker(queued.message);
          // Stop withdraws the waiting question by the id its root will have.
          if (queued.rootRunId) liveRoot.current = queued.rootRunId;
        }
      },
      onError: () => {
        if (following.current) following.current.outcome = 'failed';
      },
      onFinish: ({ message, isAbort, isError, isDisconnect }) => {
        const resuming = following.current;
        if (resuming && !isAbort) {
          resuming.outcome = isError || isDisconnect ? 'failed' : 'ended';
          // Its notice goes with the stream that answered it, not a moment after.
          if (resuming.outcome === 'ended') setResumed((earlier) => new Set(earlier).add(resuming.runId));
        }
        // Whether the answer delegated: the server's word when it gives one, else whether the tree had children.
        const root = rootRunIdOf(message);
        if (answered.current === message.id) return;
        answered.current = message.id;
        onAnswered(message.metadata?.delegationUsed ?? (root ? store.children(root).length > 0 : false));
      },
    });
  const busy = status === 'submitted' || status === 'streaming';
  // Said while the question waits for a worker; gone once its answer starts (or fails).
  useEffect(() => {
    if (status !== 'submitted') setWaitingWorker(undefined);
  }, [status]);
  // A new question (or the same one asked again) gets its own word when it is answered.
  useEffect(() => {
    if (status === 'submitted') answered.current = undefined;
  }, [status]);

  const cancel = useCallback(async () => {
    const last = messages.at(-1);
    const rootRunId = liveRoot.current ?? (last?.role === 'assistant' ? rootRunIdOf(last) : undefined);
    if (!rootRunId) {
      stop();
      return;
    }
    try {
      await apiFetch(`/api/runs/${encodeURIComponent(rootRunId)}/cancel`, { method: 'POST' });
    } catch {
      // The tree may have just ended; stop reading either way.
      stop();
    }
  }, [messages, stop]);

  // Esc stops the answer from the conversation (the message box has its own Esc, which does the same).
  // Anywhere else Esc belongs to what has focus: clearing a search, closing a menu or a dialog.
  useEffect(() => {
    if (!busy) return;
    const onKey = (event: KeyboardEvent) => {
      if (event.key !== 'Escape' || event.defaultPrevented) return;
      const target = event.target as HTMLElement | null;
      if (!target || !scroller.current?.contains(target)) return;
      if (target.closest('input, textarea, select, dialog, [role="dialog"], [role="menu"]')) return;
      void cancel();
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [busy, cancel]);

  // A question stored a moment ago whose answer has not started yet (its process is still setting up, or
  // a terminal is answering it) has nothing to attach to on the first look: look again for a few seconds.
  const lastRole = messages.at(-1)?.role;
  const unanswered = status === 'ready' && !error && lastRole === 'user' && interrupted.length === 0;
  // biome-ignore lint/correctness/useExhaustiveDependencies: one round of looks per unanswered question
  useEffect(() => {
    if (!unanswered) return;
    let looks = 0;
    const timer = setInterval(() => {
      if (++looks > ATTACH_LOOKS) clearInterval(timer);
      else void resumeStream();
    }, ATTACH_LOOK_MS);
    return () => clearInterval(timer);
  }, [unanswered]);

  // Questions asked while an answer is being written wait here, in order, and go one by one as each
  // answer ends: the server takes one answer at a time per session, so they never interleave.
  const [queued, setQueued] = useState<Question[]>([]);
  // While the main agent has answered and waits only for its background runs, a message goes to it at once
  // (`POST /api/runs/:rootId/messages`) and it answers it meanwhile, in this answer; the message shows
  // here until its part comes back in the answer. One with documents waits, as a new question.
  const lastMessage = messages.at(-1);
  const liveRootId =
    liveRoot.current ?? (lastMessage?.role === 'assistant' ? rootRunIdOf(lastMessage) : undefined);
  const mainWaits = useWaitsForBackground(store, busy ? liveRootId : undefined);
  const [telling, setTelling] = useState<Array<{ id: string; text: string }>>([]);
  const joinedIds = new Set(
    lastMessage?.role === 'assistant'
      ? lastMessage.parts.flatMap((part) => (part.type === 'data-said' && part.id ? [part.id] : []))
      : [],
  );
  const sending = telling.filter(({ id }) => !joinedIds.has(id));
  useEffect(() => {
    if (!busy) setTelling([]);
  }, [busy]);
  const tellMain = async (rootRunId: string, text: string) => {
    try {
      const { messageId } = await messageRun(rootRunId, text);
      setTelling((before) => [...before, { id: messageId, text }]);
    } catch {
      // The answer ended a moment before (or the server refused): it goes as the next question instead.
      setQueued((waiting) => [...waiting, { text, attachments: [] }]);
    }
  };
  const send = (text: string) => {
    const withDocuments = attachments.pending.some(({ state }) => state === 'ready');
    if (busy && liveRootId && !withDocuments && store.waitsForBackground(liveRootId)) {
      void tellMain(liveRootId, text);
      return;
    }
    const question = { text, attachments: attachments.take() };
    if (busy) {
      setQueued((waiting) => [...waiting, question]);
      return;
    }
    if (messages.length === 0) onFirstMessage();
    liveRoot.current = undefined;
    clearError();
    if (shown.every(({ current }) => current)) {
      void sendMessage({ parts: questionParts(question) });
      return;
    }
    // An earlier version is shown: it is made current on the server first, and the question follows it.
    void continueFromShown().then(
      () => sendMessage({ parts: questionParts(question) }),
      (caught: unknown) => setVersionError(caught instanceof Error ? caught.message : String(caught)),
    );
  };
  /** Makes the shown branch the session's current one, as the server keeps it (its version ids). */
  const continueFromShown = async () => {
    const server = await getSession(sessionId);
    let current = server.messages;
    let kept = server.versions;
    for (const versionId of shownVersionIds(shownMessages(current, kept, chosen))) {
      ({ messages: current, versions: kept } = await restoreVersion(sessionId, versionId));
    }
    for (const message of kept.flatMap((version) => version.messages))
      for (const part of message.parts)
        if (part.type === 'data-run') store.putHeader(part.data as RunPartData);
    setMessages(current);
    setVersions(kept);
    setChosen({});
    setVersionError(undefined);
  };
  // An interrupted answer resumed from this page. The new attempt is the session's running answer: it is
  // followed live, as a reloaded page follows one (its notice hidden meanwhile, as every notice is while an
  // answer streams, and gone once it has ended). It may also have ended before the page asked (204): the
  // stored chat has it then. A person who left the chat meanwhile is not brought back to it.
  const resume = async (runId: string) => {
    await resumeRun(runId);
    if (!mounted.current) return;
    const followed: Following = { runId, outcome: 'none' };
    following.current = followed;
    try {
      await resumeStream();
    } finally {
      if (following.current === followed) following.current = undefined;
    }
    if (!mounted.current || followed.outcome === 'ended') return;
    if (followed.outcome === 'failed')
      throw new Error('It was resumed, but following it here failed: reload the page to see how it went.');
    onResumed?.();
  };
  // A person's follow-up of a finished sub-agent (its card's "Ask … a follow-up"): a new turn of this chat
  // that the sub-agent answers. Its question is read back as the server stored it, then its answer is
  // followed live as a reloaded page follows a running one; one that ended before the page attached is in
  // the stored chat.
  const latestMessages = useRef(messages);
  latestMessages.current = messages;
  const followUp = useCallback(
    async (runId: string, text: string) => {
      if (busy) throw new Error('An answer is still being written here: ask when it has ended.');
      await startFollowUp(runId, text);
      if (!mounted.current) return;
      const readBack = async () => {
        const server = await getSession(sessionId);
        for (const message of server.messages)
          for (const part of message.parts)
            if (part.type === 'data-run') store.putHeader(part.data as RunPartData);
        return server.messages;
      };
      setMessages(await readBack());
      liveRoot.current = undefined;
      clearError();
      // Resolved once the turn is under way (the card's box closes); it is followed from here on.
      void resumeStream().then(async () => {
        if (!mounted.current) return;
        const stored = await readBack();
        if (stored.length > latestMessages.current.length) setMessages(stored);
      });
    },
    [busy, sessionId, store, setMessages, clearError, resumeStream],
  );
  const failure = error ? chatErrorMessage(error) : undefined;
  // The stream broke off (the server went away): runs it left running stop spinning, marked interrupted.
  useEffect(() => {
    if (error && liveRoot.current)
      store.markUnfinished(liveRoot.current, 'The connection to the server was lost before this run ended.');
  }, [error, store]);
  // Another tab or a terminal started an answer in this session first: the question waits for it, and
  // the page follows that answer meanwhile instead of showing a refusal.
  // biome-ignore lint/correctness/useExhaustiveDependencies: acts once per refusal
  useEffect(() => {
    if (failure?.code !== 'answer_running') return;
    const last = messages.at(-1);
    const text =
      last?.role === 'user'
        ? last.parts.map((part) => (part.type === 'text' ? part.text : '')).join('')
        : undefined;
    if (last?.role === 'user') setMessages(messages.slice(0, -1));
    if (text?.trim()) setQueued((waiting) => [{ text, attachments: attachmentsOf(last!) }, ...waiting]);
    clearError();
    void resumeStream();
  }, [failure?.code]);
  // biome-ignore lint/correctness/useExhaustiveDependencies: the next question goes when the page is idle
  useEffect(() => {
    if (status !== 'ready' || queued.length === 0) return;
    const [next, ...rest] = queued;
    setQueued(rest);
    liveRoot.current = undefined;
    void sendMessage({ parts: questionParts(next!) });
  }, [status, queued.length]);
  /** What a resend of the question at `index` replaces becomes its earlier version; the new one is shown. */
  const keepReplaced = useCallback(
    (index: number) => {
      const version = index < 0 ? undefined : replacedVersion(messages, index);
      if (!version) return;
      setVersions((earlier) => [...earlier, version]);
      setChosen(({ [versionKey(version.afterId)]: _shown, ...others }) => others);
    },
    [messages],
  );
  // Retry writes the failed answer again in its place: the question is resent under its own id, so the
  // server replaces it and the failed answer (stored with the session) instead of adding a second copy;
  // what a reload shows is what is on screen now. A question whose request failed before any answer
  // began is simply sent again. Regenerate does the same for an answer that did not fail.
  const retry = useCallback(() => {
    clearError();
    liveRoot.current = undefined;
    keepReplaced(messages.findLastIndex((message) => message.role === 'user'));
    void regenerate();
  }, [clearError, regenerate, messages, keepReplaced]);
  // An edited question is sent in place of the old one: its answer and what followed are replaced.
  const edit = useCallback(
    (messageId: string, text: string) => {
      clearError();
      liveRoot.current = undefined;
      // The edited question keeps the documents it was sent with.
      const edited = messages.find((message) => message.id === messageId);
      keepReplaced(messages.findIndex((message) => message.id === messageId));
      void sendMessage({
        parts: questionParts({ text, attachments: edited ? attachmentsOf(edited) : [] }),
        messageId,
      });
    },
    [clearError, sendMessage, messages, keepReplaced],
  );
  const chooseVersion = useCallback((key: string, at: number) => {
    setChosen((earlier) => ({ ...earlier, [key]: at }));
  }, []);
  const shown = useMemo(() => shownMessages(messages, versions, chosen), [messages, versions, chosen]);

  const attachments = useAttachments();

  // A message found by the search is shown where it is in the chat, marked for a moment.
  // biome-ignore lint/correctness/useExhaustiveDependencies: once per found message
  useEffect(() => {
    if (!foundMessageId) return;
    const element = scroller.current?.querySelector<HTMLElement>(
      `[data-message-id="${CSS.escape(foundMessageId)}"]`,
    );
    const frame = scroller.current;
    if (!element || !frame) return;
    release();
    frame.scrollTop += element.getBoundingClientRect().top - frame.getBoundingClientRect().top - 12;
    element.classList.add('found');
    element.tabIndex = -1;
    element.focus({ preventScroll: true });
  }, [foundMessageId]);

  const noModel = noModelMessage ?? (failure?.code === 'no_model' ? failure.message : undefined);
  const lastIndex = shown.length - 1;
  return (
    // biome-ignore lint/a11y/noStaticElementInteractions: dropping files is a pointer shortcut for the paperclip button, which every keyboard reaches
    <div
      className="chat"
      // Files dropped anywhere on the chat are attached to the next message, as the paperclip does.
      onDragOver={(event) => {
        if (event.dataTransfer.types.includes('Files')) event.preventDefault();
      }}
      onDrop={(event) => {
        const files = [...event.dataTransfer.files];
        if (files.length === 0) return;
        event.preventDefault();
        attachments.add(files);
      }}
    >
      <div className="messages-frame">
        <div
          className="messages"
          ref={scroller}
          // Focusable, so a click in the conversation puts the keys (scrolling, Esc) there.
          tabIndex={-1}
        >
          <FollowUpContext.Provider value={followUp}>
            <div className="messages-inner" ref={content}>
              {noModel && <SetupNotice message={noModel} />}
              {messages.length === 0 && !noModel && (
                <div className="empty">
                  <h2>What can Cadre find out for you?</h2>
                  <p>
                    The main agent hands focused work to sub-agents (research, documents, maths, code). Each
                    one's steps show here as they happen.
                  </p>
                </div>
              )}
              {shown.map(({ message, current, versions: switchable }, index) => {
                // A follow-up and its answer were asked of a sub-agent, not of the chat: they are not sent
                // to the main agent again (retried, regenerated or edited).
                const followedUp =
                  !!message.metadata?.followUp ||
                  (message.role === 'assistant' && !!shown[index - 1]?.message.metadata?.followUp);
                const again = current && index === lastIndex && !busy && !followedUp ? retry : undefined;
                return (
                  <MessageView
                    key={`${current ? '' : 'earlier-'}${message.id}`}
                    message={message}
                    store={store}
                    streaming={current && busy && index === lastIndex}
                    onInspect={setInspecting}
                    // An earlier version is read, not asked again: its actions are the current one's.
                    onRetry={again}
                    onRegenerate={again}
                    onEdit={current && !busy && !followedUp ? edit : undefined}
                    versions={switchable}
                    onVersion={chooseVersion}
                  />
                );
              })}
              {interrupted
                .filter((answer) => !resumed.has(answer.runId))
                .map((answer) => (
                  <InterruptedNotice
                    key={answer.runId}
                    interrupted={answer}
                    onResume={resume}
                    hidden={busy}
                  />
                ))}
              {status === 'submitted' && messages.at(-1)?.role === 'user' && (
                <p className="thinking" aria-live="polite">
                  <span className="spinner small" aria-hidden="true" /> {waitingWorker ?? 'Starting…'}
                </p>
              )}
              {versionError && (
                <div className="notice notice-error" role="alert">
                  <span>{versionError}</span>
                </div>
              )}
              {failure && !noModel && (
                <div className="notice notice-error" role="alert">
                  <span>{failure.message}</span>
                  <button type="button" className="button small" onClick={retry}>
                    Retry
                  </button>
                </div>
              )}
            </div>
          </FollowUpContext.Provider>
        </div>
        {busy && awayFromLatest && (
          <button type="button" className="button small jump-latest" onClick={jumpToLatest}>
            ↓ Jump to latest
          </button>
        )}
      </div>
      {busy && sending.length > 0 && (
        <ol className="queued" aria-label="Messages on their way to the main agent">
          {sending.map(({ id, text }) => (
            <li key={id} className="queued-item">
              <span className="queued-label">Sending to the main agent</span>
              <span className="queued-text">{text}</span>
            </li>
          ))}
        </ol>
      )}
      {queued.length > 0 && (
        <ol className="queued" aria-label="Questions waiting for the answer to end">
          {queued.map(({ text }, index) => (
            // biome-ignore lint/suspicious/noArrayIndexKey: the same text may be queued twice
            <li key={index} className="queued-item">
              <span className="queued-label">Waiting to send</span>
              <span className="queued-text">{text}</span>
              <button
                type="button"
                className="icon-button"
                aria-label={`Don't send: ${text}`}
                onClick={() => setQueued((waiting) => waiting.filter((_, at) => at !== index))}
              >
                ×
              </button>
            </li>
          ))}
        </ol>
      )}
      <PendingAttachments pending={attachments.pending} onRemove={attachments.remove} />
      <AnswerAnnouncer messages={messages} busy={busy} failed={Boolean(error)} />
      <ApprovalPrompts store={store} />
      <BackgroundCount store={store} />
      <Composer
        busy={busy}
        talking={mainWaits}
        disabled={Boolean(noModel)}
        onSend={send}
        onStop={() => void cancel()}
        onAttach={attachments.add}
      />
      {inspecting && (
        <RunInspector
          store={store}
          rootRunId={inspecting}
          rootCalls={rootCallsOf(
            shown.map(({ message }) => message).find((message) => rootRunIdOf(message) === inspecting),
          )}
          onClose={() => setInspecting(undefined)}
          onOpenRun={(runId) => {
            release();
            showRun(store, runId);
          }}
        />
      )}
    </div>
  );
}
