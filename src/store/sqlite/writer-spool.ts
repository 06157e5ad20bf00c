import type { CadreEvent } from '../../core/events.ts';
import { outputJson } from '../../core/output-json.ts';
import { isOutputResult, okResultBody } from '../journal-bodies.ts';
import { inflatePayloads } from '../payloads.ts';
import { safeJson } from '../safe-json.ts';
import type { JournalAttempt, JournalEntry } from './event-rows.ts';
import { type Spool, type SpoolRecord, spoolLine } from './spool.ts';

/** One item of the event writer's queue. */
export type Pending =
  | {
      kind: 'event';
      event: CadreEvent;
      /**
       * The event's JSON (`safeJson` of it) once it was spooled: the slice that puts it in the table stores
       * the same text instead of serialising the event again (see EventRows.writeEvent).
       */
      json?: string;
      replayed?: true;
      /** Characters its lines took in the spool, once spooled. */
      spooledChars?: number;
    }
  | { kind: 'journal'; entry: JournalEntry; spooledChars?: number }
  | { kind: 'attempt'; attempt: JournalAttempt; spooledChars?: number };

/** A dead process's spool as queue items (see EventWriter.replay), its large outputs put back. */
export function replayedItems(records: SpoolRecord[]): Pending[] {
  const payloads = new Map<string, string>();
  const items: Array<Pending | undefined> = [];
  /**
   * Journal entries whose output is their tool-result event's (`R` lines), by run and call, until it comes.
   * Several may name one event: call ids are unique only within a run, so another run's entry with the same
   * call id and the same output may have been written against it.
   */
  const awaiting = new Map<string, Awaiting[]>();
  /** Tool-result events so far, by run and call, for an `R` line after its event. */
  const results = new Map<string, CadreEvent>();
  for (const record of records) {
    if (record.kind === 'payload') payloads.set(record.hash, record.json);
    else if (record.kind === 'journal-ref') {
      // Its place in the journal's order is kept; an entry whose event is not there (a torn append) is dropped.
      const key = callKey(record.runId, record.key);
      const waiting = awaiting.get(key);
      if (waiting) waiting.push({ index: items.length, record });
      else awaiting.set(key, [{ index: items.length, record }]);
      items.push(undefined);
      const event = results.get(key);
      if (event) resolveShared(event, awaiting, items);
    } else if (record.kind === 'journal') {
      const { journalId, runKey, entryKind, key, body } = record;
      const output = resultOutput(entryKind, body);
      const entry = {
        journalId,
        runKey,
        kind: entryKind,
        key,
        body,
        ...(output === undefined ? {} : { output }),
      };
      items.push({ kind: 'journal', entry });
    } else if (record.kind === 'attempt') {
      const { kind: _kind, ...attempt } = record;
      items.push({ kind: 'attempt', attempt });
    } else {
      const body = JSON.parse(record.body) as Record<string, unknown>;
      const inflated = inflatePayloads(
        body,
        record.payloadHash && (payloads.get(record.payloadHash) ?? null),
      );
      const event = inflated as CadreEvent;
      items.push({ kind: 'event', event, replayed: true });
      if (event.type === 'tool-result') {
        results.set(callKey(event.runId, event.toolCallId), event);
        resolveShared(event, awaiting, items);
      }
    }
  }
  return items.filter((item) => item !== undefined);
}

/** One run's tool call: call ids are unique only within a run. */
function callKey(runId: string, toolCallId: string): string {
  return `${runId}\u0000${toolCallId}`;
}

/** A journal entry's place in the replayed items, until the event its `R` line names comes. */
type Awaiting = { index: number; record: SpoolRecord & { kind: 'journal-ref' } };

/** Puts in their places the journal entries `R` lines said carry this tool-result event's output. */
function resolveShared(
  event: CadreEvent,
  awaiting: Map<string, Awaiting[]>,
  items: Array<Pending | undefined>,
): void {
  if (event.type !== 'tool-result') return;
  const key = callKey(event.runId, event.toolCallId);
  const found = awaiting.get(key);
  if (!found) return;
  awaiting.delete(key);
  const result = { ok: event.ok, output: event.output };
  if (!isOutputResult(result)) return;
  const output = JSON.stringify(result.output);
  for (const { index, record } of found) {
    const { journalId, runKey, entryKind, key: entryKey } = record;
    items[index] = {
      kind: 'journal',
      entry: {
        journalId,
        runKey,
        kind: entryKind,
        key: entryKey,
        body: okResultBody(output),
        output,
      },
    };
  }
}

/** Outputs at least this long (JSON characters) are written once when a journal entry and its event share them. */
const SHARE_FROM_CHARS = 1024;

/**
 * A spooled tool result's output as JSON (see JournalEntry.output), so a large one is stored once with its
 * event's, as when the live process writes it. Made from the parsed output, as the replayed event's is.
 */
function resultOutput(kind: string, body: string): string | undefined {
  if (kind !== 'tool-result') return undefined;
  const result: unknown = JSON.parse(body);
  return isOutputResult(result) ? JSON.stringify(result.output) : undefined;
}

/** Characters of spooled records already in the table after which the spool is rewritten without them. */
const REWRITE_AFTER_CHARS = 1 << 20;

/**
 * The event writer's side of its spool (see spool.ts): which queue items it holds, how much of it the
 * table has caught up with, and whether it may be emptied. Failures to write it are reported and turn it
 * off (`broken`): securing then commits instead.
 */
export class WriterSpool {
  #spool: Spool;
  #report: (error: unknown) => void;
  /** Appending failed (a full disk, a removed folder). */
  broken = false;
  /** Lines of items dropped after failed writes: the spool keeps them, for the next start to apply. */
  #lost = '';
  /** Something was dropped while the spool was broken: whatever it holds stays. */
  #keepAll = false;
  /** Characters in the spool since it was last emptied, and how many of them the table has already. */
  #chars = 0;
  #charsWritten = 0;

  /** False with `batched` durability: events reach the table in slices only, never the spool. */
  #events: boolean;

  constructor(spool: Spool, report: (error: unknown) => void, options: { events?: boolean } = {}) {
    this.#spool = spool;
    this.#report = report;
    this.#events = options.events ?? true;
  }

  /** Appends `items` from index `from` in one write; throws (after marking itself broken) when it fails. */
  append(items: Pending[], from: number): void {
    let text = '';
    for (let index = from; index < items.length; index++) {
      const item = items[index]!;
      const lines = item.kind === 'journal' ? this.#journalLine(items, from, index) : this.#lines(item);
      item.spooledChars = lines.length;
      text += lines;
    }
    if (!text) return;
    try {
      this.#spool.append(text);
    } catch (error) {
      this.broken = true;
      throw error;
    }
    this.#chars += text.length;
  }

  /**
   * Secures `items` from `from` when it can, and keeps `dropped` (items a failed write dropped from the
   * queue) in the spool from now on, however often it is emptied, for the next start to apply.
   */
  keep(items: Pending[], from: number, dropped: Pending[]): void {
    if (!this.broken) {
      try {
        this.append(items, from);
        // Whatever SQLite refused is kept for the next start, events too.
        for (const item of dropped) this.#lost += pendingLines(item);
        return;
      } catch (error) {
        this.#report(error);
      }
    }
    // Dropped items it could not take may still be anywhere in it from before: all of it stays.
    this.#keepAll = true;
  }

  /** Spooled items the table now has. */
  written(items: Pending[], from: number, to: number): void {
    for (let index = from; index < to; index++) this.#charsWritten += items[index]!.spooledChars ?? 0;
  }

  /** True when most of the spool, and a lot, is in the table already while the queue has not emptied. */
  get wantsRewrite(): boolean {
    return (
      !this.broken &&
      !this.#keepAll &&
      this.#charsWritten > REWRITE_AFTER_CHARS &&
      this.#charsWritten * 2 > this.#chars
    );
  }

  /** Empties the file (but for what was dropped): everything else in it is in the table. */
  empty(): void {
    if (this.#keepAll || this.#chars === this.#lost.length) return;
    if (this.#lost) {
      this.rewrite([], 0, 0);
      return;
    }
    try {
      this.#spool.clear();
      this.#chars = 0;
      this.#charsWritten = 0;
    } catch (error) {
      // What stays in it is in the table already; a later start skips it.
      this.broken = true;
      this.#report(error);
    }
  }

  /** The spool again with only `items` (what the table lacks), swapped in whole (see Spool.replace). */
  rewrite(items: Pending[], from: number, to: number): void {
    let text = this.#lost;
    for (let index = from; index < to; index++) text += this.#lines(items[index]!);
    try {
      this.#spool.replace(text);
      this.#chars = text.length;
      this.#charsWritten = 0;
    } catch (error) {
      this.broken = true;
      this.#report(error);
    }
  }

  close(): void {
    this.#spool.close(this.#lost !== '' || this.#keepAll);
  }

  /**
   * A journal entry's line. A tool result's large output is not written twice when its tool-result event,
   * carrying the very same value, is in the same append (`items` from `from`: one write, so both or neither
   * are kept): the entry refers to it (an `R` line, see spool.ts).
   */
  #journalLine(items: Pending[], from: number, index: number): string {
    const item = items[index] as Pending & { kind: 'journal' };
    const { entry } = item;
    if (this.#events && entry.value !== undefined && (entry.output?.length ?? 0) >= SHARE_FROM_CHARS) {
      for (let at = from; at < items.length; at++) {
        const other = items[at]!;
        if (other.kind !== 'event' || other.event.type !== 'tool-result') continue;
        const { event } = other;
        if (event.toolCallId !== entry.key || !event.ok || event.output !== entry.value) continue;
        const { journalId, runKey, kind, key } = entry;
        return spoolLine({
          kind: 'journal-ref',
          journalId,
          runKey,
          entryKind: kind,
          key,
          runId: event.runId,
        });
      }
    }
    return pendingLines(item);
  }

  #lines(item: Pending): string {
    return item.kind === 'event' && !this.#events ? '' : pendingLines(item);
  }
}

/**
 * An item's line in a spool (see spool.ts). An event goes whole, its large output inline: hashing the
 * output to store it once is left to the slice that puts it in the table, off the run's hot path
 * (measured: 12 µs per 20 KB output, on top of the 10 µs its JSON costs either way).
 */
export function pendingLines(item: Pending): string {
  if (item.kind === 'journal') {
    const { journalId, runKey, kind, key, body } = item.entry;
    return spoolLine({ kind: 'journal', journalId, runKey, entryKind: kind, key, body });
  }
  if (item.kind === 'attempt') return spoolLine({ kind: 'attempt', ...item.attempt });
  const json = eventJson(item.event);
  // A tool result's JSON is put together around its output's (below): the table's row is made the usual way.
  if (item.event.type !== 'tool-result') item.json = json;
  return `E\t\t${json}\n`;
}

/** An event's JSON; a tool result's object output is serialised once with its journal entry (output-json.ts). */
function eventJson(event: CadreEvent): string {
  if (event.type !== 'tool-result' || typeof event.output !== 'object' || event.output === null) {
    return safeJson(event);
  }
  const { output, ...rest } = event;
  try {
    return `${safeJson(rest).slice(0, -1)},"output":${outputJson(output)}}`;
  } catch {
    // A cycle or a BigInt: safeJson marks them.
    return safeJson(event);
  }
}
