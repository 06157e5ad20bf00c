/**
 * One message of the conversation. An answer shows its parts in the order they came: text as Markdown,
 * and each delegation as the sub-agent's run in the place the main agent called it. Runs the main agent
 * did not call itself (prefetched ones) come first. Under the answer: how it ended, its cost, its sources.
 */
import { memo } from 'react';
import { formatTokens } from '../format.ts';
import type { CadreMessage, RunPartData } from '../runs/protocol.ts';
import { RunCard } from '../runs/run-card.tsx';
import { type RunStore, useChildren, useRun } from '../runs/run-store.ts';
import { SourcesList } from '../runs/sources-list.tsx';
import { STATUS_LABELS } from '../runs/status-icon.tsx';
import { ToolCallView } from '../runs/tool-call-view.tsx';
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
  /** Set by the server when an earlier question's result answered this delegation. */
  toolMetadata?: { reused?: { runId: string; finishedAt: string } };
}

function toolName(part: ToolPartLike): string {
  return part.toolName ?? part.type.replace(/^tool-/, '');
}

export const MessageView = memo(function MessageView({
  message,
  store,
  streaming,
  onInspect,
  onRetry,
}: {
  message: CadreMessage;
  store: RunStore;
  streaming: boolean;
  onInspect: (rootRunId: string) => void;
  onRetry?: () => void;
}) {
  if (message.role === 'user') {
    const text = message.parts.map((part) => (part.type === 'text' ? part.text : '')).join('');
    return (
      <article className="message user" aria-label="Your message">
        <div className="bubble">{text}</div>
      </article>
    );
  }
  const rootRunId = rootRunIdOf(message);
  return (
    <article className="message assistant" aria-label="Answer">
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
        if (part.type === 'dynamic-tool' || part.type.startsWith('tool-')) {
          const tool = part as unknown as ToolPartLike;
          const childRunId = store.runForToolCall(tool.toolCallId);
          if (childRunId)
            return <RunCard key={key} store={store} runId={childRunId} callInput={tool.input} />;
          return <DelegationOrTool key={key} store={store} tool={tool} />;
        }
        return null;
      })}
      {rootRunId && <LooseRuns store={store} rootRunId={rootRunId} message={message} place="after" />}
      {streaming && message.parts.every((part) => part.type !== 'text') && (
        <p className="thinking" aria-live="polite">
          <span className="spinner small" aria-hidden="true" /> Working…
        </p>
      )}
      {rootRunId && (
        <AnswerFooter
          store={store}
          rootRunId={rootRunId}
          message={message}
          onInspect={onInspect}
          onRetry={onRetry}
        />
      )}
    </article>
  );
});

/** A tool part whose run has not been announced yet shows as a plain tool call (it re-renders when it is). */
function DelegationOrTool({ store, tool }: { store: RunStore; tool: ToolPartLike }) {
  const childRunId = store.runForToolCall(tool.toolCallId);
  if (childRunId) return <RunCard store={store} runId={childRunId} callInput={tool.input} />;
  const done = tool.state === 'output-available';
  const failed = tool.state === 'output-error';
  return (
    <ToolCallView
      call={{
        id: tool.toolCallId,
        name: toolName(tool),
        input: tool.input,
        ...(done ? { ok: true, output: tool.output } : {}),
        ...(failed ? { ok: false, error: tool.errorText ?? 'failed' } : {}),
        ...(tool.toolMetadata?.reused ? { reused: tool.toolMetadata.reused } : {}),
      }}
    />
  );
}

/**
 * Child runs of the root without a tool part in the message. Prefetched runs (no tool call started them)
 * come `before` the answer. A delegation whose run was announced before its tool part reached the
 * message (the message updates are throttled) waits `after` the parts: exactly where its tool part will
 * appear, so it does not jump when that part arrives.
 */
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
}: {
  store: RunStore;
  rootRunId: string;
  message: CadreMessage;
  onInspect: (rootRunId: string) => void;
  onRetry?: (() => void) | undefined;
}) {
  const root = useRun(store, rootRunId);
  const status = message.metadata?.status ?? root?.status;
  const usage = message.metadata?.usage ?? root?.subtreeUsage;
  const failed = status !== undefined && status !== 'running' && status !== 'ok';
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
      {root?.sources && <SourcesList sources={root.sources} />}
      <div className="answer-footer">
        {usage && <span>{formatTokens(usage.totalTokens)} in all</span>}
        {message.metadata?.delegationUsed && <span className="badge">delegation mode used</span>}
        <button type="button" className="link-button" onClick={() => onInspect(rootRunId)}>
          Inspect runs
        </button>
      </div>
    </>
  );
}
