import type { ChildRunRequest } from '../../core/child-runs.ts';
import type { RuntimeLimits } from '../../core/limits.ts';
import type { ResumeSpec } from '../../store/journal-store.ts';

/** The models the asker composed the tree with (its config's or CADRE_MODEL), so a worker runs it on them. */
export interface TreeModels {
  /** The root's model, unless its agent names one. */
  main?: string;
  /** Sub-agents' model, unless their definition names one (else each inherits its parent's). */
  subagent?: string;
}

/** What a `tree` job carries: the tree as its journal's spec says, with the ids decided when it was asked. */
export interface TreeJobData {
  journalId: string;
  userId: string;
  rootRunId: string;
  spec: ResumeSpec;
  limits?: Partial<RuntimeLimits>;
  models?: TreeModels;
  rootLimits?: Partial<Pick<RuntimeLimits, 'maxTurns' | 'timeoutMs'>>;
}

/** What a `run` job carries: the child as data, its id, and the tree's journal. */
export interface RunJobData {
  request: ChildRunRequest;
  runId: string;
  journalId: string;
  limits?: Partial<RuntimeLimits>;
  models?: TreeModels;
}
