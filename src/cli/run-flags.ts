import type { RunRequest } from '../core/index.ts';
import { UserError } from '../core/index.ts';
import type { FlagSpec } from './command-args.ts';

/** The flags that choose what `ask` and `chat` run with. */
/** `--no-worker`: with runs as jobs (CADRE_DATABASE_URL), this process only asks; `cadre worker`s run. */
export const NO_WORKER_FLAG = {
  'no-worker': {
    type: 'boolean',
    description: 'with CADRE_DATABASE_URL: put runs on the queue for cadre worker processes, run none here',
  },
} as const satisfies Record<string, FlagSpec>;

export const RUN_SETUP_FLAGS = {
  model: {
    type: 'string',
    placeholder: 'P:M',
    description: 'the model, as provider:model (over CADRE_MODEL)',
  },
  workspace: {
    type: 'string',
    placeholder: 'DIR',
    description: 'the folder the workspace tools may read (default: the current one)',
  },
  config: { type: 'string', placeholder: 'FILE', description: 'read this config file too' },
} as const satisfies Record<string, FlagSpec>;

/** The limit flags `ask` and `chat` share. */
export const RUN_LIMIT_FLAGS = {
  'max-turns': {
    type: 'string',
    placeholder: 'N',
    description: 'model calls with tools the main agent (or --agent) may make before it must answer',
  },
  budget: {
    type: 'string',
    placeholder: 'TOKENS',
    description:
      'tokens the whole tree of runs may spend (config limits.treeBudget); then it stops as budget',
  },
  timeout: {
    type: 'string',
    placeholder: 'SECONDS',
    description: 'wall-clock limit for the whole answer; then it stops as timeout',
  },
} as const satisfies Record<string, FlagSpec>;

/** How `ask` and `chat` decide tool calls that need a person's approval without asking. */
export const APPROVAL_FLAGS = {
  'approve-all': {
    type: 'boolean',
    default: false,
    description: 'approve every tool call that needs approval (write_file, edit_file, bash…) without asking',
  },
  'deny-all': { type: 'boolean', default: false, description: 'deny every tool call that needs approval' },
} as const satisfies Record<string, FlagSpec>;

/** `--max-turns`, `--budget`, `--timeout` as the root run's limits and the tree's budget. */
export function runLimits(values: { 'max-turns'?: string; budget?: string; timeout?: string }): {
  rootLimits: NonNullable<RunRequest['rootLimits']>;
  treeBudget: number | undefined;
} {
  const rootLimits: NonNullable<RunRequest['rootLimits']> = {};
  const maxTurns = whole('--max-turns', values['max-turns']);
  if (maxTurns !== undefined) rootLimits.maxTurns = maxTurns;
  if (values.timeout !== undefined) {
    const seconds = Number(values.timeout);
    if (!Number.isFinite(seconds) || seconds <= 0)
      throw new UserError('usage', `--timeout ${values.timeout}: expected a number of seconds above 0`);
    rootLimits.timeoutMs = Math.round(seconds * 1000);
  }
  return { rootLimits, treeBudget: whole('--budget', values.budget) };
}

function whole(flag: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const number = Number(value);
  if (!Number.isInteger(number) || number < 1)
    throw new UserError('usage', `${flag} ${value}: expected a whole number above 0`);
  return number;
}
