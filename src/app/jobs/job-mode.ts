/**
 * What a Cadre whose runs are jobs (PostgreSQL) needs beyond one that runs them in process, in one module
 * so `create-cadre.ts` loads it only when the store has a queue.
 */
export { QueuedTrees } from './queued-trees.ts';
export { SharedApprovals } from './shared-approvals.ts';
export { TreeWorker } from './tree-worker.ts';

export type JobMode = typeof import('./job-mode.ts');
