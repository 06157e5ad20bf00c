import {
  chmodSync,
  closeSync,
  ftruncateSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import { currentBoot, type RunOwner } from '../run-owner.ts';

/**
 * A process's spool: an append-only file beside the database that holds what must survive a kill
 * (a tool result the model is about to see, a journal entry) until it is in SQLite. Appending is one
 * `write` to the page cache, a few microseconds; a kill cannot undo a write that returned, so the file
 * is as durable against SIGKILL as a SQLite commit with `synchronous = NORMAL`, without inserting into
 * four indexes on the run's hot path. The writer empties the file once SQLite has caught up; a process
 * that died leaves its file behind, and the next one to open the store applies it (`deadSpools`).
 *
 * Lines, one record each (JSON never contains a raw newline or tab):
 * - `P\t<hash>\t<json>`: a large output stored once, before the event that references it;
 * - `E\t<hash or empty>\t<event json>`: an event (its cursor is given when it reaches the table, after
 *   whatever of its tree is there: the spool holds a suffix of each tree's events, and what the table has
 *   already is recognised by run and sequence);
 * - `J\t<[journalId, runKey, kind, key] json>\t<body json>`: a journal entry;
 * - `R\t<[journalId, runKey, kind, key, runId] json>`: a tool result's journal entry whose body is
 *   `{"ok":true,"output":…}` with the output of run `runId`'s tool-result event for call `key`, written
 *   later in the same append (a large output is written once, not twice);
 * - `A\t<[journalId, rootRunId, userId, startedAt] json>\t<spec json>`: an attempt of a journal's tree
 *   (see JournalStore.begin).
 */
/** Spools this process has open: never taken for a dead process's, whatever id they carry. */
const openHere = new Set<string>();

export class Spool {
  readonly path: string;
  #fd: number | undefined;
  #bytes = 0;

  constructor(dir: string, owner: RunOwner) {
    this.path = join(dir, spoolName(owner));
  }

  /** Appends `text` (whole lines) and returns once the operating system holds it. */
  append(text: string): void {
    if (this.#fd === undefined) {
      // Spooled events are users' messages and tool outputs: no one else on the machine reads them.
      mkdirSync(join(this.path, '..'), { recursive: true, mode: 0o700 });
      chmodSync(join(this.path, '..'), 0o700);
      this.#fd = openSync(this.path, 'a', 0o600);
      openHere.add(this.path);
    }
    // One write of the string itself (no Buffer on the heap for a 20 KB output); the rest of a short one
    // (a disk filling up) is written after it, or the error thrown.
    let written = writeSync(this.#fd, text);
    const total = Buffer.byteLength(text);
    if (written < total) {
      const bytes = Buffer.from(text);
      while (written < total) written += writeSync(this.#fd, bytes, written);
    }
    this.#bytes += written;
  }

  /** True when something was appended since the file was last emptied. */
  get holdsData(): boolean {
    return this.#bytes > 0;
  }

  /** Empties the file: everything in it is in the database now. */
  clear(): void {
    if (this.#fd === undefined || this.#bytes === 0) return;
    ftruncateSync(this.#fd, 0);
    this.#bytes = 0;
  }

  /**
   * Replaces the file's content with `text` (what the database still lacks): written beside it and renamed
   * over it, so a kill meanwhile leaves either the old file or the new one, whole.
   */
  replace(text: string): void {
    if (this.#fd === undefined) return;
    const next = `${this.path}.next`;
    writeFileSync(next, text);
    renameSync(next, this.path);
    closeSync(this.#fd);
    this.#fd = openSync(this.path, 'a');
    this.#bytes = Buffer.byteLength(text);
  }

  /** Closes the file; removes it unless `keep` (it still holds records the database lacks). */
  close(keep = false): void {
    if (this.#fd === undefined) return;
    closeSync(this.#fd);
    this.#fd = undefined;
    openHere.delete(this.path);
    if (!keep) rmSync(this.path, { force: true });
  }
}

/** Where the spools of the database at `databasePath` live. */
export function spoolDirFor(databasePath: string): string {
  return `${databasePath}-spool`;
}

export type SpoolRecord =
  | { kind: 'payload'; hash: string; json: string }
  | { kind: 'event'; payloadHash: string | null; body: string }
  | { kind: 'journal'; journalId: string; runKey: string; key: string; entryKind: string; body: string }
  | { kind: 'journal-ref'; journalId: string; runKey: string; key: string; entryKind: string; runId: string }
  | {
      kind: 'attempt';
      journalId: string;
      rootRunId: string;
      userId: string;
      startedAt: number;
      spec: string;
    };

export function spoolLine(record: SpoolRecord): string {
  switch (record.kind) {
    case 'payload':
      return `P\t${record.hash}\t${record.json}\n`;
    case 'event':
      return `E\t${record.payloadHash ?? ''}\t${record.body}\n`;
    case 'journal':
      return `J\t${JSON.stringify([record.journalId, record.runKey, record.entryKind, record.key])}\t${record.body}\n`;
    case 'journal-ref':
      return `R\t${JSON.stringify([record.journalId, record.runKey, record.entryKind, record.key, record.runId])}\n`;
    case 'attempt':
      return `A\t${JSON.stringify([record.journalId, record.rootRunId, record.userId, record.startedAt])}\t${record.spec}\n`;
  }
}

/**
 * Reads a spool's records in order. A line cut short by a kill mid-write (only ever the last) is
 * dropped: nothing after it was acknowledged.
 */
export function readSpool(path: string): SpoolRecord[] {
  return readSpoolText(readFileSync(path, 'utf8'));
}

/** The records in a spool's text (see readSpool). */
export function readSpoolText(text: string): SpoolRecord[] {
  const records: SpoolRecord[] = [];
  for (const line of text.split('\n')) {
    const record = parseLine(line);
    if (record) records.push(record);
  }
  return records;
}

function parseLine(line: string): SpoolRecord | undefined {
  const fields = line.split('\t');
  try {
    if (fields[0] === 'P' && fields.length === 3) {
      JSON.parse(fields[2]!);
      return { kind: 'payload', hash: fields[1]!, json: fields[2]! };
    }
    if (fields[0] === 'E' && fields.length >= 3) {
      const body = fields.slice(2).join('\t');
      const event = JSON.parse(body) as { runId?: unknown; seq?: unknown };
      if (typeof event?.runId !== 'string' || typeof event.seq !== 'number') return undefined;
      return { kind: 'event', payloadHash: fields[1] || null, body };
    }
    if (fields[0] === 'J' && fields.length >= 3) {
      const [journalId, runKey, entryKind, key] = JSON.parse(fields[1]!) as string[];
      const body = fields.slice(2).join('\t');
      JSON.parse(body);
      if (![journalId, runKey, entryKind, key].every((value) => typeof value === 'string')) return undefined;
      return {
        kind: 'journal',
        journalId: journalId!,
        runKey: runKey!,
        entryKind: entryKind!,
        key: key!,
        body,
      };
    }
    if (fields[0] === 'R' && fields.length === 2) {
      const [journalId, runKey, entryKind, key, runId] = JSON.parse(fields[1]!) as unknown[];
      const values = [journalId, runKey, entryKind, key, runId];
      if (!values.every((value) => typeof value === 'string')) return undefined;
      return {
        kind: 'journal-ref',
        journalId: journalId as string,
        runKey: runKey as string,
        entryKind: entryKind as string,
        key: key as string,
        runId: runId as string,
      };
    }
    if (fields[0] === 'A' && fields.length >= 3) {
      const [journalId, rootRunId, userId, startedAt] = JSON.parse(fields[1]!) as unknown[];
      const spec = fields.slice(2).join('\t');
      JSON.parse(spec);
      if (![journalId, rootRunId, userId].every((value) => typeof value === 'string')) return undefined;
      if (typeof startedAt !== 'number') return undefined;
      return {
        kind: 'attempt',
        journalId: journalId as string,
        rootRunId: rootRunId as string,
        userId: userId as string,
        startedAt,
        spec,
      };
    }
  } catch {
    // A torn last line.
  }
  return undefined;
}

/**
 * Spools left by processes of this machine that are gone (SIGKILL, a closed terminal, a reboot), oldest
 * first. The process that wrote a spool is in its name, so a live one's file is never touched; a file with
 * this process's own id (ids are reused, often in containers) is an earlier process's unless it is open
 * here, and a file from an earlier boot (its name says which, on Linux) is dead whatever process has its
 * id now (ids start again at each boot, so after a reboot the id is often another process's).
 */
export function deadSpools(
  dir: string,
  owner: RunOwner,
  isAlive: (pid: number) => boolean,
  boot = currentBoot(),
): Array<{ path: string; owner: RunOwner }> {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  const host = encodeURIComponent(owner.host);
  const found: Array<{ path: string; owner: RunOwner; created: string }> = [];
  for (const name of names) {
    const parts = /^([^~]+)~(\d+)~([a-z0-9]+)(?:~([0-9a-f]+))?\.spool$/.exec(name);
    if (!parts || parts[1] !== host) continue;
    const pid = Number(parts[2]);
    const path = join(dir, name);
    const earlierBoot = Boolean(boot && parts[4] && parts[4] !== boot);
    if (openHere.has(path) || (pid !== owner.pid && !earlierBoot && isAlive(pid))) continue;
    found.push({ path, owner: { pid, host: owner.host }, created: parts[3]! });
  }
  // The last part starts with the time the spool was made (see spoolName), not the process id's order.
  return found
    .sort((a, b) => (a.created < b.created ? -1 : a.created > b.created ? 1 : 0))
    .map(({ path, owner }) => ({ path, owner }));
}

function spoolName(owner: RunOwner): string {
  // Time first, so names sort by age; base 36 milliseconds keep eight digits until 2059.
  const unique = `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 8)}`;
  const boot = currentBoot();
  return `${encodeURIComponent(owner.host)}~${owner.pid}~${unique}${boot ? `~${boot}` : ''}.spool`;
}
