/**
 * A tree's journal in memory, for core tests that run a tree, stop it and run it again on the same journal
 * (what a resume does), and what a scripted request's user messages say.
 */
import type { JournalKind, TreeJournal } from '../../src/core/journal.ts';
import type { ScriptedRequest } from '../../src/models/scripted-model.ts';

export class MemoryJournal implements TreeJournal {
  entries = new Map<string, unknown>();
  get(runKey: string, kind: JournalKind, key: string) {
    return this.entries.get(`${runKey}|${kind}|${key}`);
  }
  put(runKey: string, kind: JournalKind, key: string, body: unknown) {
    this.entries.set(`${runKey}|${kind}|${key}`, JSON.parse(JSON.stringify(body)));
  }
}

/** Everything the request's user messages say, as one text (their contents as JSON, a line each). */
export const userTexts = (request: ScriptedRequest) =>
  request.prompt
    .filter((message) => message.role === 'user')
    .map((message) => JSON.stringify(message.content))
    .join('\n');
