import type { CadreEvent } from '../core/events.ts';
import type { MessageVersion, RunSummary, SessionSummary, StoredMessage } from './store.ts';

// Rows of the runs and sessions tables as the interfaces' objects, the same for every backend (the
// column names are the same in each); values are converted, as drivers hand numbers back differently.

/** A row of any backend's driver: column name to value. */
type Row = Record<string, any>;

/** What a run's row keeps of its `run-finish`: the result envelope, as the tree JSON shows it. */
export function finishedEnvelope(event: Extract<CadreEvent, { type: 'run-finish' }>) {
  return {
    status: event.status,
    summary: event.summary,
    data: event.data,
    sources: event.sources,
    usage: event.usage,
    subtreeUsage: event.subtreeUsage,
    runId: event.runId,
  };
}

/** A root run's row (with its envelope's JSON) as listed. */
export function runSummary(row: Row): RunSummary {
  return {
    id: row.id,
    agent: row.agent,
    task: row.task,
    status: row.status,
    summary: row.summary,
    model: row.model,
    sessionId: row.session_id,
    startedAt: iso(row.started_at),
    endedAt: row.ended_at === null ? null : iso(row.ended_at),
    totalTokens: row.envelope ? (JSON.parse(row.envelope).subtreeUsage?.totalTokens ?? null) : null,
  };
}

export function sessionSummary(row: Row): SessionSummary {
  return { id: row.id, title: row.title, createdAt: iso(row.created_at), updatedAt: iso(row.updated_at) };
}

/** A message's row, its parts and metadata kept as JSON text. */
export function storedMessage(row: Row): StoredMessage {
  return {
    id: row.id,
    role: row.role,
    content: row.content,
    ...(row.parts ? { parts: JSON.parse(row.parts) } : {}),
    ...(row.metadata ? { metadata: JSON.parse(row.metadata) } : {}),
    ...(row.run_id ? { runId: row.run_id } : {}),
    createdAt: iso(row.created_at),
  };
}

/** A stored earlier version (`message_versions` row): its messages are kept as one JSON list. */
export function messageVersion(row: Row): MessageVersion {
  return {
    id: row.id,
    afterId: row.after_id ?? null,
    messages: JSON.parse(row.messages) as StoredMessage[],
    replacedAt: iso(row.replaced_at),
  };
}

/** Milliseconds since the epoch (as a number or a numeric string) as an ISO date. */
export function iso(ms: number | string): string {
  return new Date(Number(ms)).toISOString();
}
