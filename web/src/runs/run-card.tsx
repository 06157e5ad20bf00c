/**
 * One sub-agent run, nested to any depth. Collapsed it is one line of fixed height (agent, task, status,
 * time, tokens), so siblings streaming side by side never push each other around; expanded it shows the
 * full task, the tool calls (a call that started a child run shows that run in its place), the response
 * as it streams and then the summary, the error, the usage, and the children.
 */
import { memo, useId, useState } from 'react';
import { apiFetch } from '../api/client.ts';
import { messageRun } from '../api/resources.ts';
import { Markdown } from '../chat/markdown.tsx';
import { formatCost, formatDuration, formatTokens, truncate } from '../format.ts';
import { DocumentAnalysis } from './document-analysis.tsx';
import { FollowUpBox } from './follow-up.tsx';
import { PlanChecklist } from './plan-checklist.tsx';
import { type RunView, retryWords, runTokens } from './run-fold.ts';
import { useRunInputs } from './run-inputs.ts';
import type { RunStore } from './run-store.ts';
import { useChildren, useRun, useRunOpen } from './run-store.ts';
import { SourcesList } from './sources-list.tsx';
import { STATUS_LABELS, StatusIcon } from './status-icon.tsx';
import { ToolCallView } from './tool-call-view.tsx';
import { useNow } from './use-now.ts';

export const RunCard = memo(
  function RunCard({
    store,
    runId,
    callInput,
  }: {
    store: RunStore;
    runId: string;
    /** The input of the tool call that started it, when the caller has it (see useRunInputs). */
    callInput?: unknown;
  }) {
    const run = useRun(store, runId);
    const children = useChildren(store, runId);
    const inputs = useRunInputs(store, runId, callInput);
    // Kept across reloads: a card the person opened is open again when they come back.
    const [expanded, setExpanded] = useRunOpen(store, runId);
    const bodyId = useId();
    const running = run?.status === 'running';
    const now = useNow(running);
    if (!run) return null;
    const elapsed = (run.endedAt ?? (running ? now || Date.now() : run.startedAt)) - run.startedAt;
    const tokens = runTokens(run);
    const attached = new Set(run.toolCalls.map((call) => store.runForToolCall(call.id)).filter(Boolean));
    const loose = children.filter((child) => !attached.has(child));
    const response = withoutError(run.summary || run.text, run.error);
    // The header says in words what the run is doing or how it ended, on its one line (nothing below moves):
    // the tool it waits on, the person's approval it waits for, or why it ended other than done.
    const pending = running ? run.toolCalls.findLast((call) => call.ok === undefined) : undefined;
    const words = run.retry
      ? retryWords(run.retry)
      : pending
        ? pending.approval && pending.approval.approved === undefined
          ? 'waiting for your approval'
          : `${pending.name}…`
        : run.stoppedBy === 'person'
          ? 'stopped by you'
          : !running && run.status !== 'ok'
            ? STATUS_LABELS[run.status]
            : undefined;
    return (
      <section className={`run run-${run.status}`} aria-label={`${run.agent} run`} id={runElementId(runId)}>
        <div className="run-head">
          <button
            type="button"
            className="run-header"
            aria-expanded={expanded}
            aria-controls={bodyId}
            // A stable name (no ticking time): "math: running. Compute 17 * 23."
            aria-label={`${run.agent}: ${STATUS_LABELS[run.status]}${run.background ? (running ? ' in the background' : ', ran in the background') : ''}. ${truncate(run.task, 120)}`}
            onClick={() => setExpanded(!expanded)}
          >
            <span className="chevron" aria-hidden="true">
              {expanded ? '▾' : '▸'}
            </span>
            <StatusIcon status={run.status} />
            <span className="run-agent">{run.agent}</span>
            {run.forked && (
              <span
                className="run-forked"
                title="Started with its parent's whole conversation (context: fork)"
              >
                forked context
              </span>
            )}
            {run.background && (
              <span
                className="run-forked run-background"
                title="The main agent went on while it runs; its result reaches the main agent when it ends"
              >
                background
              </span>
            )}
            <span className="run-task">{truncate(run.task, 120)}</span>
            {words && (
              <span
                className={`run-words run-words-${run.retry ? 'retry' : run.status}`}
                title={run.retry?.reason}
              >
                {words}
              </span>
            )}
            <span className="run-meta">
              <span className="run-time">{formatDuration(Math.max(0, elapsed))}</span>
              {(running || tokens > 0) && <span className="run-tokens">{formatTokens(tokens)}</span>}
            </span>
          </button>
          {running && run.parentRunId !== null && <StopRunButton runId={runId} agent={run.agent} />}
        </div>
        {run.plan && run.plan.length > 0 && <PlanChecklist plan={run.plan} />}
        {run.agent === 'analyze_document' && <DocumentAnalysis run={run} inputs={inputs} />}
        {expanded && (
          <div className="run-body" id={bodyId}>
            <div className="run-field">
              <div className="section-label">Task</div>
              <p className="run-full-task">{run.task}</p>
            </div>
            {Object.keys(inputs).length > 0 && (
              <div className="run-field">
                <div className="section-label">Inputs</div>
                <dl className="run-inputs">
                  {Object.entries(inputs).map(([name, value]) => (
                    <div key={name}>
                      <dt>{name}</dt>
                      <dd>{typeof value === 'string' ? value : JSON.stringify(value)}</dd>
                    </div>
                  ))}
                </dl>
              </div>
            )}
            {run.toolCalls.length > 0 && (
              <div className="run-field">
                <div className="section-label">Tool calls</div>
                <ul className="tool-calls" aria-label={`${run.agent} tool calls`}>
                  {run.toolCalls.map((call) => {
                    const childRunId = store.runForToolCall(call.id);
                    return (
                      <li key={call.id}>
                        {childRunId ? (
                          <RunCard store={store} runId={childRunId} />
                        ) : (
                          <ToolCallView call={call} />
                        )}
                      </li>
                    );
                  })}
                </ul>
              </div>
            )}
            {loose.length > 0 && (
              <div className="run-field run-children">
                {loose.map((child) => (
                  <RunCard key={child} store={store} runId={child} />
                ))}
              </div>
            )}
            {(run.messages?.length || running) && (
              <RunMessages runId={runId} agent={run.agent} messages={run.messages ?? []} running={running} />
            )}
            {run.continues && (
              <p className="run-continues muted small-text">
                Continues {run.agent}'s earlier run, from its own conversation.
              </p>
            )}
            {response && (
              <div className="run-field">
                <div className="section-label">{run.summary ? 'Summary' : 'Response (writing…)'}</div>
                <Markdown text={response} />
              </div>
            )}
            {followable(run) && <FollowUpBox runId={runId} agent={run.agent} />}
            {run.sources && <SourcesList sources={run.sources} />}
            {run.error && <p className="run-error-message">{run.error}</p>}
            <dl className="run-usage">
              <dt>Status</dt>
              <dd>{STATUS_LABELS[run.status]}</dd>
              <dt>Model</dt>
              <dd>{run.model || '—'}</dd>
              <dt>Own usage</dt>
              <dd>
                {run.usage
                  ? `${formatTokens(run.usage.totalTokens)} (${usageParts(run.usage)})`
                  : formatTokens(tokens)}
                {run.cost ? ` · ${formatCost(run.cost)}` : ''}
              </dd>
              {run.subtreeUsage && run.subtreeUsage.totalTokens !== run.usage?.totalTokens && (
                <>
                  <dt>With its sub-agents</dt>
                  <dd>
                    {formatTokens(run.subtreeUsage.totalTokens)}
                    {run.subtreeCost ? ` · ${formatCost(run.subtreeCost)}` : ''}
                  </dd>
                </>
              )}
            </dl>
          </div>
        )}
      </section>
    );
  },
  // The answer's message is copied on each of useChat's updates, so the call's input is a new object every
  // time: compared by content, the eight cards of a streaming answer are not all drawn again each update.
  (before, after) =>
    before.store === after.store &&
    before.runId === after.runId &&
    (before.callInput === after.callInput ||
      JSON.stringify(before.callInput) === JSON.stringify(after.callInput)),
);

/**
 * Stops this sub-agent alone (`POST /api/runs/:id/cancel`): it ends with what it had done, which its
 * parent receives and goes on with; its siblings go on. The card says "Stopped by the person" once its
 * end arrives.
 */
function StopRunButton({ runId, agent }: { runId: string; agent: string }) {
  const [state, setState] = useState<'idle' | 'stopping' | 'failed'>('idle');
  const stop = async () => {
    setState('stopping');
    try {
      await apiFetch(`/api/runs/${encodeURIComponent(runId)}/cancel`, { method: 'POST' });
    } catch {
      setState('failed');
    }
  };
  return (
    <button
      type="button"
      className="run-stop"
      aria-label={`Stop ${agent}`}
      title={
        state === 'failed'
          ? 'Could not stop it; try again'
          : `Stop ${agent} alone: its parent goes on with what it had done`
      }
      disabled={state === 'stopping'}
      onClick={() => void stop()}
    >
      <span className="stop-square" aria-hidden="true" />
      <span className="run-stop-label">{state === 'stopping' ? 'Stopping…' : 'Stop'}</span>
    </button>
  );
}

/**
 * What the person said to the run, and while it runs a box to say more (`POST /api/runs/:id/messages`):
 * each message joins the run's conversation at its next model step; until then it shows as waiting.
 */
function RunMessages({
  runId,
  agent,
  messages,
  running,
}: {
  runId: string;
  agent: string;
  messages: NonNullable<RunView['messages']>;
  running: boolean;
}) {
  const [text, setText] = useState('');
  const [sent, setSent] = useState<Array<{ id: string; text: string }>>([]);
  const [error, setError] = useState<string | undefined>();
  const [sending, setSending] = useState(false);
  const inputId = useId();
  const joined = new Set(messages.map((message) => message.id));
  const waiting = running ? sent.filter((message) => !joined.has(message.id)) : [];
  const send = async () => {
    const said = text.trim();
    if (!said || sending) return;
    setSending(true);
    setError(undefined);
    try {
      const { messageId } = await messageRun(runId, said);
      setSent((before) => [...before, { id: messageId, text: said }]);
      setText('');
    } catch (failure) {
      setError(failure instanceof Error ? failure.message : String(failure));
    } finally {
      setSending(false);
    }
  };
  return (
    <div className="run-field run-messages">
      {(messages.length > 0 || waiting.length > 0) && (
        <>
          <div className="section-label">You said</div>
          <ul className="run-message-list" aria-label={`Your messages to ${agent}`}>
            {messages.map((message) => (
              <li key={message.id}>
                <span className="run-message-text">{message.text}</span>
                <span className="run-message-when">before step {message.step + 1}</span>
              </li>
            ))}
            {waiting.map((message) => (
              <li key={message.id} className="run-message-waiting">
                <span className="run-message-text">{message.text}</span>
                <span className="run-message-when">joins its next step…</span>
              </li>
            ))}
          </ul>
        </>
      )}
      {running && (
        <form
          className="run-say"
          onSubmit={(event) => {
            event.preventDefault();
            void send();
          }}
        >
          <label htmlFor={inputId} className="visually-hidden">
            Message to {agent}
          </label>
          <input
            id={inputId}
            value={text}
            placeholder={`Tell ${agent} something…`}
            maxLength={20_000}
            onChange={(event) => setText(event.target.value)}
          />
          <button type="submit" className="button small" disabled={sending || !text.trim()}>
            Send
          </button>
        </form>
      )}
      {error && (
        <p className="run-error-message" role="alert">
          {error}
        </p>
      )}
    </div>
  );
}

/**
 * A finished sub-agent run (or a follow-up of one) whose conversation the server may have kept: one the
 * person can follow up. An interrupted one ended without keeping it.
 */
function followable(run: RunView): boolean {
  return (
    run.status !== 'running' && run.status !== 'interrupted' && (run.parentRunId !== null || !!run.continues)
  );
}

/** The id of a run's card on the page (the timeline scrolls to it). */
export function runElementId(runId: string): string {
  return `run-${runId}`;
}

/**
 * A failed run's summary is its error, or its partial answer with the error noted after it: the error is
 * shown once, on its own line, so the summary keeps only what the run had written.
 */
function withoutError(response: string, error: string | undefined): string {
  if (!error) return response;
  if (response.trim() === error.trim()) return '';
  return response.replace(`\n\n[stopped by an error: ${error}]`, '').trim();
}

/**
 * "1200 in (900 cached, 100 written to cache), 300 out (120 reasoning)": the parts a provider bills apart.
 */
function usageParts(usage: NonNullable<RunView['usage']>): string {
  const cached = [
    usage.cacheReadTokens ? `${usage.cacheReadTokens} cached` : '',
    usage.cacheWriteTokens ? `${usage.cacheWriteTokens} written to cache` : '',
  ].filter(Boolean);
  const input = `${usage.inputTokens} in${cached.length ? ` (${cached.join(', ')})` : ''}`;
  const reasoning = usage.reasoningTokens ? ` (${usage.reasoningTokens} reasoning)` : '';
  return `${input}, ${usage.outputTokens} out${reasoning}`;
}
