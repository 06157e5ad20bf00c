/**
 * One message of the conversation. An answer shows its parts in the order they came: text as Markdown,
 * and each delegation as the sub-agent's run in the place the main agent called it. Runs the main agent
 * did not call itself (prefetched ones) come first. Under the answer: how it ended, its cost, its sources.
 */
import { type KeyboardEvent, memo, useEffect, useRef, useState } from 'react';
import { CopyButton } from '../controls/copy-button.tsx';
import { formatCost, formatTokens, PARTIAL_COST_NOTE, truncate } from '../format.ts';
import { PencilIcon, RefreshIcon } from '../icons.tsx';
import type { CadreMessage, RunPartData } from '../runs/protocol.ts';
import { RunCard } from '../runs/run-card.tsx';
import { type RetryNotice, retryWords, runTokens } from '../runs/run-fold.ts';
import { type RunStore, useChildren, useRun } from '../runs/run-store.ts';
import { mergeSources, SourcesList } from '../runs/sources-list.tsx';
import { CallIcon, STATUS_LABELS } from '../runs/status-icon.tsx';
import { ToolCallView } from '../runs/tool-call-view.tsx';
import { attachmentsOf, SentAttachments } from './attachments.tsx';
import { Markdown } from './markdown.tsx';

/** The root run of an answer: from its metadata, else its `data-run` part without a parent. */
export function rootRunIdOf(message: CadreMessage): string | undefined {
  if (message.metadata?.rootRunId) return message.metadata.rootRunId;
  for (const part of message.parts)
    if (part.type === 'data-run' && (part.data as RunPartData).parentRunId === null)
      return (part.data as RunPartData).runId;
  return undefined;
}

interface ToolPartLike {
  type: string;
  toolCallId: string;
  toolName?: string;
  state: string;
  input?: unknown;
  output?: unknown;
  errorText?: string;
  /** Set by the server: how the call was answered besides running (see stream-translator.ts). */
  toolMetadata?: {
    reused?: { runId: string; finishedAt: string };
    deduplicated?: boolean;
    refused?: string;
  };
}

function toolName(part: ToolPartLike): string {
  return part.toolName ?? part.type.replace(/^tool-/, '');
}

/** The id of an answer on the page (the timeline scrolls to it). */
export function answerElementId(rootRunId: string): string {
  return `answer-${rootRunId}`;
}

/** The text of a message: its text parts joined, as the person wrote it or the answer reads. */
export function messageText(message: CadreMessage): string {
  return message.parts
    .map((part) => (part.type === 'text' ? part.text : ''))
    .filter(Boolean)
    .join(message.role === 'user' ? '' : '\n\n');
}

export const MessageView = memo(function MessageView({
  message,
  store,
  streaming,
  onInspect,
  onRetry,
  onEdit,
  onRegenerate,
  versions,
  onVersion,
}: {
  message: CadreMessage;
  store: RunStore;
  streaming: boolean;
  onInspect: (rootRunId: string) => void;
  onRetry?: (() => void) | undefined;
  /** Sends the question again with new text, in its place: what followed it is replaced. */
  onEdit?: ((messageId: string, text: string) => void) | undefined;
  /** Writes this answer again (the last answer only). */
  onRegenerate?: (() => void) | undefined;
  /** On an answer whose question was regenerated or edited: which version is shown, of how many. */
  versions?: { key: string; at: number; count: number } | undefined;
  onVersion?: ((key: string, at: number) => void) | undefined;
}) {
  if (message.role === 'user')
    return <UserMessage message={message} onEdit={onEdit && ((text) => onEdit(message.id, text))} />;
  const rootRunId = rootRunIdOf(message);
  return (
    <article
      className="message assistant"
      data-message-id={message.id}
      aria-label="Answer"
      id={rootRunId ? answerElementId(rootRunId) : undefined}
    >
      {rootRunId && <FollowUpRun store={store} rootRunId={rootRunId} />}
      {rootRunId && <LooseRuns store={store} rootRunId={rootRunId} message={message} place="before" />}
      {message.parts.map((part, index) => {
        const key = `${message.id}-${index}`;
        if (part.type === 'text')
          return <Markdown key={key} text={part.text} streaming={part.state === 'streaming'} />;
        if (part.type === 'reasoning' && part.text.trim())
          return (
            <details key={key} className="reasoning">
              <summary>Reasoning</summary>
              <p>{part.text}</p>
            </details>
          );
        if (part.type === 'data-background')
          return (
            <p key={key} className="background-turn" role="note">
              {part.data.agent} finished in the background (
              {part.data.status === 'ok' ? 'done' : part.data.status}); the main agent goes on with its result
            </p>
          );
        if (part.type === 'data-said')
          return (
            <blockquote key={key} className="said-in-answer" aria-label="You said to the main agent">
              <span className="said-label" aria-hidden="true">
                You
              </span>
              <p className="said-text">{part.data.text}</p>
            </blockquote>
          );
        if (part.type === 'dynamic-tool' || part.type.startsWith('tool-')) {
          const tool = part as unknown as ToolPartLike;
          const childRunId = store.runForToolCall(tool.toolCallId);
          if (childRunId)
            return <RunCard key={key} store={store} runId={childRunId} callInput={tool.input} />;
          return <DelegationOrTool key={key} store={store} tool={tool} rootRunId={rootRunId} />;
        }
        return null;
      })}
      {rootRunId && <LooseRuns store={store} rootRunId={rootRunId} message={message} place="after" />}
      {streaming && rootRunId && <RetryNote store={store} rootRunId={rootRunId} message={message} />}
      {streaming && message.parts.every((part) => part.type !== 'text') && (
        <p className="thinking" aria-live="polite">
          <span className="spinner small" aria-hidden="true" /> Working…
        </p>
      )}
      {versions && onVersion && <VersionSwitch versions={versions} onVersion={onVersion} />}
      {rootRunId && (
        <AnswerFooter
          store={store}
          rootRunId={rootRunId}
          message={message}
          onInspect={onInspect}
          onRetry={onRetry}
          onRegenerate={streaming ? undefined : onRegenerate}
        />
      )}
    </article>
  );
});

/**
 * While the main agent's model call waits to be tried again, says so under the answer. The main agent's
 * own text and calls reach the page as the message's parts, not as run events, so the note ends when the
 * answer grows after it (or another retry replaces it).
 */
function RetryNote({
  store,
  rootRunId,
  message,
}: {
  store: RunStore;
  rootRunId: string;
  message: CadreMessage;
}) {
  const retry = useRun(store, rootRunId)?.retry;
  const progress = answerProgress(message);
  const seen = useRef<{ retry: RetryNotice; progress: number } | undefined>(undefined);
  if (retry && seen.current?.retry !== retry) seen.current = { retry, progress };
  if (!retry || seen.current?.progress !== progress) return null;
  return (
    <p className="retry-note" role="status" title={retry.reason}>
      {retryWords(retry).replace(/^t/, 'T')}…
    </p>
  );
}

/** How far an answer has come: its parts, and the characters of its text parts. */
function answerProgress(message: CadreMessage): number {
  return message.parts.reduce((sum, part) => sum + 1 + (part.type === 'text' ? part.text.length : 0), 0);
}

/**
 * The person's message, with Copy and Edit under it. Edit turns the bubble into a text box in place:
 * Enter (or Send) asks the edited question instead, Esc (or Cancel) leaves it as it was.
 */
function UserMessage({
  message,
  onEdit,
}: {
  message: CadreMessage;
  onEdit?: ((text: string) => void) | undefined;
}) {
  const text = messageText(message);
  const followUp = message.metadata?.followUp;
  const [draft, setDraft] = useState<string | undefined>();
  const area = useRef<HTMLTextAreaElement>(null);
  const editButton = useRef<HTMLButtonElement>(null);
  const returnFocus = useRef(false);
  const editing = draft !== undefined;
  useEffect(() => {
    if (editing) {
      area.current?.focus();
      area.current?.setSelectionRange(area.current.value.length, area.current.value.length);
    } else if (returnFocus.current) editButton.current?.focus();
  }, [editing]);
  const cancel = () => {
    returnFocus.current = true;
    setDraft(undefined);
  };
  const send = () => {
    const edited = draft?.trim();
    if (!edited || !onEdit) return;
    returnFocus.current = false;
    setDraft(undefined);
    onEdit(edited);
  };
  const onKeyDown = (event: KeyboardEvent<HTMLTextAreaElement>) => {
    if (event.key === 'Enter' && !event.shiftKey && !event.nativeEvent.isComposing) {
      event.preventDefault();
      send();
    } else if (event.key === 'Escape') {
      event.preventDefault();
      event.stopPropagation();
      cancel();
    }
  };
  return (
    <article className="message user" aria-label="Your message" data-message-id={message.id}>
      {editing ? (
        <form
          className="edit-message"
          onSubmit={(event) => {
            event.preventDefault();
            send();
          }}
        >
          <textarea
            ref={area}
            aria-label="Edit your message"
            rows={Math.min(8, Math.max(2, draft.split('\n').length))}
            value={draft}
            onChange={(event) => setDraft(event.target.value)}
            onKeyDown={onKeyDown}
          />
          <div className="edit-actions">
            <span className="muted small-text">
              Sending replaces this question's answer and what came after.
            </span>
            <button type="button" className="button small" onClick={cancel}>
              Cancel
            </button>
            <button type="submit" className="button small primary" disabled={!draft.trim()}>
              Send
            </button>
          </div>
        </form>
      ) : (
        <>
          {followUp && <p className="follow-up-to muted small-text">Follow-up to {followUp.agent}</p>}
          <div className="bubble">{text}</div>
        </>
      )}
      <SentAttachments attachments={attachmentsOf(message)} />
      {!editing && (
        <div className="message-actions">
          <CopyButton label="Copy your message" text={() => text} />
          {onEdit && (
            <button
              ref={editButton}
              type="button"
              className="link-button action-button"
              aria-label="Edit your message"
              onClick={() => setDraft(text)}
            >
              <PencilIcon />
              <span>Edit</span>
            </button>
          )}
        </div>
      )}
    </article>
  );
}

/**
 * A tool part whose run has not been announced yet (it re-renders when it is): a delegation still waiting
 * for a free place beside its running siblings shows as queued, anything else as a plain tool call.
 */
function DelegationOrTool({
  store,
  tool,
  rootRunId,
}: {
  store: RunStore;
  tool: ToolPartLike;
  rootRunId: string | undefined;
}) {
  // The main agent's approvals travel as its run's events: the call waits for, or got, the person's word.
  const root = useRun(store, rootRunId ?? '');
  const approval = root?.toolCalls.find((call) => call.id === tool.toolCallId)?.approval;
  const childRunId = store.runForToolCall(tool.toolCallId);
  if (childRunId) return <RunCard store={store} runId={childRunId} callInput={tool.input} />;
  const done = tool.state === 'output-available';
  const failed = tool.state === 'output-error';
  const metadata = tool.toolMetadata;
  const task = delegationTask(tool.input);
  if (task !== undefined && !done && !failed) return <QueuedDelegation agent={toolName(tool)} task={task} />;
  return (
    <ToolCallView
      call={{
        id: tool.toolCallId,
        name: toolName(tool),
        input: tool.input,
        ...(done ? { ok: true, output: tool.output } : {}),
        ...(failed ? { ok: false, error: tool.errorText ?? 'failed' } : {}),
        ...(metadata?.refused ? { refused: metadata.refused } : {}),
        ...(metadata?.reused ? { reused: metadata.reused } : {}),
        ...(metadata?.deduplicated ? { deduplicated: true } : {}),
        ...(approval ? { approval } : {}),
      }}
    />
  );
}

/** The task of a delegation's input (sub-agents take `{task, …}`); undefined for other tools. */
function delegationTask(input: unknown): string | undefined {
  const task = (input as { task?: unknown } | undefined)?.task;
  return typeof task === 'string' ? task : undefined;
}

/** A delegation the main agent asked for whose run has not started: it waits for a free place. */
function QueuedDelegation({ agent, task }: { agent: string; task: string }) {
  const words = 'queued: starts when one of the sub-agents running now ends';
  return (
    <section className="run run-queued" aria-label={`${agent} run`}>
      <div className="run-header">
        <span className="chevron" aria-hidden="true" />
        <CallIcon kind="queued" label={`${agent}: queued`} />
        <span className="run-agent">{agent}</span>
        <span className="run-task">{truncate(task, 120)}</span>
        <span className="run-words">{words}</span>
      </div>
    </section>
  );
}

/**
 * Child runs of the root without a tool part in the message. Prefetched runs (no tool call started them)
 * come `before` the answer. A delegation whose run was announced before its tool part reached the
 * message (the message updates are throttled) waits `after` the parts: exactly where its tool part will
 * appear, so it does not jump when that part arrives.
 */
/**
 * An answer that follows up a finished sub-agent run is that sub-agent's own run (the tree's root): it is
 * shown as its card, as the run it continues was, so it can be followed up again from there.
 */
function FollowUpRun({ store, rootRunId }: { store: RunStore; rootRunId: string }) {
  const root = useRun(store, rootRunId);
  if (!root?.continues) return null;
  return (
    <div className="loose-runs">
      <RunCard store={store} runId={rootRunId} />
    </div>
  );
}

function LooseRuns({
  store,
  rootRunId,
  message,
  place,
}: {
  store: RunStore;
  rootRunId: string;
  message: CadreMessage;
  place: 'before' | 'after';
}) {
  const children = useChildren(store, rootRunId);
  const called = new Set(
    message.parts
      .filter((part) => part.type === 'dynamic-tool' || part.type.startsWith('tool-'))
      .map((part) => (part as unknown as ToolPartLike).toolCallId),
  );
  const loose = children.filter((child) => {
    const toolCallId = store.get(child)?.parentToolCallId;
    return place === 'before' ? !toolCallId : toolCallId !== undefined && !called.has(toolCallId);
  });
  if (loose.length === 0) return null;
  return (
    <div className="loose-runs">
      {loose.map((child) => (
        <RunCard key={child} store={store} runId={child} />
      ))}
    </div>
  );
}

function AnswerFooter({
  store,
  rootRunId,
  message,
  onInspect,
  onRetry,
  onRegenerate,
}: {
  store: RunStore;
  rootRunId: string;
  message: CadreMessage;
  onInspect: (rootRunId: string) => void;
  onRetry?: (() => void) | undefined;
  onRegenerate?: (() => void) | undefined;
}) {
  const root = useRun(store, rootRunId);
  const status = message.metadata?.status ?? root?.status;
  const usage = message.metadata?.usage ?? root?.subtreeUsage;
  const cost = message.metadata?.cost ?? root?.subtreeCost;
  const failed = status !== undefined && status !== 'running' && status !== 'ok';
  const liveTokens = usage ? 0 : store.tree(rootRunId).reduce((sum, run) => sum + runTokens(run), 0);
  return (
    <>
      {failed && (
        <div className={`notice notice-${status}`} role="alert">
          <span>
            {status === 'cancelled' ? 'Stopped: cancelled.' : `This answer ended: ${STATUS_LABELS[status]}.`}
            {root?.error ? ` ${root.error}` : ''}
          </span>
          {onRetry && (
            <button type="button" className="button small" onClick={onRetry}>
              Retry
            </button>
          )}
        </div>
      )}
      {/* Once per answer: what every run of the tree cited, each address once, verified first. */}
      {status !== 'running' && (
        <SourcesList sources={mergeSources(store.tree(rootRunId).map((run) => run.sources))} />
      )}
      <div className="answer-footer">
        {status !== 'running' && messageText(message).trim() && (
          <CopyButton label="Copy answer" text={() => messageText(message)} />
        )}
        {onRegenerate && !failed && (
          <button
            type="button"
            className="link-button action-button"
            aria-label="Regenerate answer"
            title="Write this answer again"
            onClick={onRegenerate}
          >
            <RefreshIcon />
            <span>Regenerate</span>
          </button>
        )}
        {/* A run that failed before any model answered used nothing: no "0 tokens · $0.00" under it. */}
        {usage && usage.totalTokens > 0 && <span>{formatTokens(usage.totalTokens)} in all</span>}
        {/* While it runs, what each finished model step used so far (the main agent's and its sub-agents'). */}
        {!usage && status === 'running' && liveTokens > 0 && (
          <span className="live-usage">{formatTokens(liveTokens)} so far</span>
        )}
        {cost && cost.amount > 0 && (
          <span className="cost" title={cost.partial ? PARTIAL_COST_NOTE : 'What these tokens cost'}>
            <span className="visually-hidden">Cost: </span>
            {formatCost(cost)}
          </span>
        )}
        {message.metadata?.delegationUsed && <span className="badge">used sub-agents</span>}
        <button type="button" className="link-button" onClick={() => onInspect(rootRunId)}>
          Inspect runs
        </button>
      </div>
    </>
  );
}

/** `< 1/2 >` on an answer that was regenerated or edited: steps through its versions, the newest last. */
function VersionSwitch({
  versions: { key, at, count },
  onVersion,
}: {
  versions: { key: string; at: number; count: number };
  onVersion: (key: string, at: number) => void;
}) {
  return (
    // biome-ignore lint/a11y/useSemanticElements: a group of two buttons and a count, not a form's fieldset
    <div className="version-switch" role="group" aria-label="Versions of this answer">
      <button
        type="button"
        className="icon-button"
        aria-label="Earlier version"
        disabled={at === 0}
        onClick={() => onVersion(key, at - 1)}
      >
        ‹
      </button>
      <span aria-live="polite">
        <span className="visually-hidden">Version </span>
        {at + 1}
        <span aria-hidden="true">/</span>
        <span className="visually-hidden"> of </span>
        {count}
      </span>
      <button
        type="button"
        className="icon-button"
        aria-label="Later version"
        disabled={at === count - 1}
        onClick={() => onVersion(key, at + 1)}
      >
        ›
      </button>
    </div>
  );
}
