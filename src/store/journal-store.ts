import type { ModelMessage } from 'ai';
import type { TreeJournal } from '../core/journal.ts';

/** What a resumed attempt needs to start the root run again exactly as the first attempt did. */
export interface ResumeSpec {
  agent: string;
  task: string;
  history: ModelMessage[];
  inputs: Record<string, unknown>;
  sessionId?: string;
  /**
   * The stored question the tree answers (its id and when it was stored): when the person sends it again
   * or edits it, it is replaced, and the tree's answer has no place in the session any more.
   */
  question?: { id: string; createdAt: string };
  /** The id the answer's stored message gets (every attempt stores it under the same id). */
  answerId?: string;
  model?: string;
  prefetch?: { agent: string; task?: string };
  /** The question was sent again: its sub-agents run anew (see RunRequest.freshResults). */
  freshResults?: boolean;
  /** A person's follow-up of a finished sub-agent run: its id (`history` is then its kept conversation). */
  continues?: string;
}

/** A journal found by one of its attempts' root run ids. */
export interface FoundJournal {
  journalId: string;
  userId: string;
  spec: ResumeSpec;
  /** Root run ids of every attempt, oldest first. */
  attempts: string[];
}

/**
 * Run journals: one row per completed model step or tool result, in commit order. Several attempts of
 * one tree (the first, then each resume) share a journal id, and each attempt's root run id is recorded
 * with it, so `resume` works from any of them.
 */
export interface JournalStore {
  /** A new tree's journal (an id no attempt has used): nothing to read, each commit secured as `put` says. */
  create(journalId: string): TreeJournal & { entries(): number };
  /**
   * The journal of one tree: its entries read once (so `get` answers at once while the tree runs), each
   * commit secured as `put` says.
   */
  open(journalId: string): Promise<TreeJournal & { entries(): number }>;
  /** Records an attempt's root run (the first one also records what resuming needs). */
  begin(journalId: string, rootRunId: string, userId: string, spec: ResumeSpec): Promise<void>;
  /** The journal an attempt belongs to, when the run is the caller's root run. */
  find(userId: string, rootRunId: string): Promise<FoundJournal | undefined>;
}
