import type { BudgetLedger } from '../../core/child-runs.ts';
import type { TreeLedgerStore } from '../../store/job-queue.ts';

/**
 * A tree's token ledger kept in the database, shared by every worker running a part of the tree: each
 * charge is one atomic addition there, and what the others charged is learnt with its answer. `spent`
 * answers at once with what this process knows (its own charges at once, the others' as of the last
 * answer), which is what a budget check between model calls needs.
 */
export class SharedLedger implements BudgetLedger {
  #jobs: TreeLedgerStore;
  #rootRunId: string;
  #known = 0;
  #pending = 0;

  private constructor(jobs: TreeLedgerStore, rootRunId: string) {
    this.#jobs = jobs;
    this.#rootRunId = rootRunId;
  }

  static async open(jobs: TreeLedgerStore, rootRunId: string): Promise<SharedLedger> {
    const ledger = new SharedLedger(jobs, rootRunId);
    ledger.#known = await jobs.spent(rootRunId);
    return ledger;
  }

  spent(): number {
    return this.#known + this.#pending;
  }

  charge(tokens: number): void {
    if (tokens <= 0) return;
    this.#pending += tokens;
    this.#jobs.charge(this.#rootRunId, tokens).then(
      (total) => {
        this.#pending -= tokens;
        this.#known = Math.max(this.#known + tokens, total);
      },
      () => {
        // Not recorded there: counted here all the same, so this process never spends past the budget.
        this.#pending -= tokens;
        this.#known += tokens;
      },
    );
  }
}
