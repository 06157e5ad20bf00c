import { createHash } from 'node:crypto';
import type { CadreEvent } from '../core/events.ts';
import { safeJson } from './safe-json.ts';
import type { StoredEvent } from './store.ts';

/** Event fields that can be large: a tool's input or output, a run's structured data. */
const LARGE_FIELDS = ['output', 'input', 'data'] as const;

/** Outputs at least this long (characters of JSON) are stored once, by content, and referenced. */
export const DEFAULT_PAYLOAD_THRESHOLD = 2_048;

export interface SplitEvent {
  /** The event's JSON, with a large field replaced by a reference when there was one. */
  body: string;
  payload?: { hash: string; json: string };
}

/**
 * Takes an event's large field out of its row: the row says which field (`$payload`) and the field's
 * JSON is stored once under its hash, so the same output recorded again (a retried call, a cached
 * result) costs a reference, and listing a tree's events never copies what nobody asked to read.
 */
export function splitPayload(event: CadreEvent, threshold = DEFAULT_PAYLOAD_THRESHOLD): SplitEvent {
  for (const field of LARGE_FIELDS) {
    const value = (event as unknown as Record<string, unknown>)[field];
    if (value === undefined || (typeof value === 'string' && value.length < threshold)) continue;
    if (typeof value !== 'string' && typeof value !== 'object') continue;
    const json = safeJson(value);
    if (json.length < threshold) continue;
    const hash = payloadHash(json);
    const body = safeJson({ ...event, [field]: undefined, $payload: field });
    return { body, payload: { hash, json } };
  }
  return { body: safeJson(event) };
}

/** The key a payload is stored under: its content's hash, so equal outputs are stored once. */
export function payloadHash(json: string): string {
  return createHash('sha256').update(json).digest('base64url');
}

/** Puts a referenced field back into an event read from a row. */
export function inflatePayloads(body: Record<string, unknown>, payload: string | null): unknown {
  const field = body.$payload;
  if (typeof field !== 'string' || payload === null) return body;
  const { $payload: _reference, ...rest } = body;
  return { ...rest, [field]: JSON.parse(payload) };
}

/**
 * Stored events from event rows (with their payloads joined), in order, stopping once `maxChars` of
 * them were read (at least one is kept): one page for `RunStore.events`, the same for every backend.
 */
export function eventPage(
  rows: Iterable<{ root_seq: number; body: string; payload: string | null }>,
  maxChars = Number.POSITIVE_INFINITY,
): StoredEvent[] {
  const page: StoredEvent[] = [];
  let chars = 0;
  for (const row of rows) {
    page.push({
      cursor: row.root_seq,
      event: inflatePayloads(JSON.parse(row.body), row.payload) as CadreEvent,
    });
    chars += row.body.length + (row.payload?.length ?? 0);
    if (chars >= maxChars) break;
  }
  return page;
}
