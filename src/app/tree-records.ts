import { type BudgetLedger, InMemoryBudgetLedger } from '../core/child-runs.ts';
import type { TreeJournal } from '../core/journal.ts';
import type { ConversationKeeper } from '../core/kept-conversations.ts';
import type { RunMessage, TreeRecord, TreeSteering } from '../core/tree-record.ts';

/**
 * The record of a tree run in this process (embedded, or on PostgreSQL without a queue): its journal in
 * the store (a new one, or an interrupted attempt's, whose committed steps are reused), its budget in
 * this process's memory. A resumed tree starts its root anew under a new run id, so no run has a resume
 * point here; runs that go on under their own ids are the job record's (`jobs/job-record.ts`).
 */
export class EmbeddedTreeRecord implements TreeRecord {
  readonly journal: TreeJournal;
  readonly ledger: BudgetLedger = new InMemoryBudgetLedger();
  readonly conversations: ConversationKeeper | undefined;

  #steering: TreeSteering | undefined;

  /** `conversations`: where finished runs' conversations are kept (the store's runs). */
  constructor(journal: TreeJournal, conversations?: ConversationKeeper) {
    this.journal = journal;
    this.conversations = conversations;
  }

  steer(steering: TreeSteering): void {
    this.#steering = steering;
  }

  /** Hands one run of the tree a person's message; false when it does not run (any more). */
  sendMessage(runId: string, message: RunMessage): boolean {
    return this.#steering?.sendMessage(runId, message) ?? false;
  }

  /** Stops one run of the tree alone (a person's stop); false when it does not run (any more). */
  stopRun(runId: string, reason: string): boolean {
    return this.#steering?.stopRun(runId, reason) ?? false;
  }
}
