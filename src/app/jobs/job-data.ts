import type { ChildRunRequest } from '../../core/child-runs.ts';
import type { RuntimeLimits } from '../../core/limits.ts';
import type { ResumeSpec } from '../../store/journal-store.ts';

/** What a `tree` job carries: the tree as its journal's spec says, with the ids decided when it was asked. */
export interface TreeJobData {
  journalId: string;
  userId: string;
  rootRunId: string;
  spec: ResumeSpec;
  limits?: Partial<RuntimeLimits>;
  rootLimits?: Partial<Pick<RuntimeLimits, 'maxTurns' | 'timeoutMs'>>;
}

/** What a `run` job carries: the child as data, its id, and the tree's journal. */
export interface RunJobData {
  request: ChildRunRequest;
  runId: string;
  journalId: string;
  limits?: Partial<RuntimeLimits>;
}
