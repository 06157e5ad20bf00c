import { parseArgs } from 'node:util';
import { UserError } from '../../core/errors.ts';
import { pruneRunTrees, removeRunTree, rootOfRun } from '../../store/run-maintenance.ts';
import { RunStore } from '../../store/run-store.ts';
import type { CliCommand } from '../cli-context.ts';
import { EXIT } from '../errors.ts';
import { runReport } from '../run-report.ts';

/**
 * `cadre runs list [--json] [--limit N]` · `cadre runs show ID [--json]` · `cadre runs rm ID...` ·
 * `cadre runs prune --older-than 30d`
 */
export const runsCommand: CliCommand = async (args, context) => {
  const [sub, ...rest] = args;
  const { values, positionals } = parseArgs({
    args: rest,
    allowPositionals: true,
    options: {
      json: { type: 'boolean', default: false },
      limit: { type: 'string' },
      'older-than': { type: 'string' },
      verbose: { type: 'boolean', default: false },
    },
  });
  const store = new RunStore(context.db(), { userId: context.userId });
  if (sub === 'list' || sub === undefined) {
    const limit = values.limit === undefined ? 20 : Number(values.limit);
    if (!Number.isInteger(limit) || limit < 1)
      throw new UserError('usage', `--limit ${values.limit}: expected a positive whole number`);
    const runs = store.listRuns({ limit, userId: context.userId });
    if (values.json) {
      context.stdout.write(`${JSON.stringify({ runs }, null, 2)}\n`);
      return EXIT.ok;
    }
    if (!runs.length) context.stdout.write('No runs yet. Try: cadre ask "What is 17 * 23?"\n');
    for (const run of runs) {
      const tokens = run.totalTokens === null ? '' : `  ${run.totalTokens} tok`;
      context.stdout.write(
        `${run.id}  ${run.startedAt}  ${run.status.padEnd(9)}  ${run.agent}  ${oneLine(run.task)}${tokens}\n`,
      );
    }
    return EXIT.ok;
  }
  if (sub === 'show') {
    const id = positionals[0];
    if (!id) throw new UserError('usage', 'usage: cadre runs show ID [--json]');
    const tree = store.getRunTree(id, { userId: context.userId });
    if (!tree) throw new UserError('unknown_run', `There is no run "${id}". See: cadre runs list`);
    if (values.json) context.stdout.write(`${JSON.stringify(tree, null, 2)}\n`);
    else
      context.stdout.write(
        runReport(tree, store.events(rootOfRun(context.db(), tree.id, context.userId) ?? tree.id), {
          verbose: values.verbose,
        }),
      );
    return EXIT.ok;
  }
  if (sub === 'rm') {
    if (!positionals.length) throw new UserError('usage', 'usage: cadre runs rm ID...');
    for (const id of positionals) {
      if (removeRunTree(context.db(), id, context.userId)) {
        context.stdout.write(`Removed run ${id} and its sub-agent runs.\n`);
        continue;
      }
      const root = rootOfRun(context.db(), id, context.userId);
      if (root)
        throw new UserError(
          'not_a_root',
          `Run "${id}" is a sub-agent run of ${root}; remove the tree: cadre runs rm ${root}`,
        );
      throw new UserError('unknown_run', `There is no run "${id}". See: cadre runs list`);
    }
    return EXIT.ok;
  }
  if (sub === 'prune') {
    const olderThan = values['older-than'];
    if (!olderThan)
      throw new UserError('usage', 'usage: cadre runs prune --older-than 30d (s, m, h, d or w)');
    const before = Date.now() - parseDuration(olderThan);
    const removed = pruneRunTrees(context.db(), before, context.userId);
    context.stdout.write(
      values.json
        ? `${JSON.stringify({ removed })}\n`
        : `Removed ${removed} run tree${removed === 1 ? '' : 's'} started before ${new Date(before).toISOString()}.\n`,
    );
    return EXIT.ok;
  }
  throw new UserError(
    'usage',
    `unknown runs command "${sub}"; use list, show ID, rm ID or prune --older-than 30d`,
  );
};

const UNIT_MS: Record<string, number> = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };

/** "30d", "12h", "90m": a duration in milliseconds. */
function parseDuration(text: string): number {
  const match = /^(\d+)\s*([smhdw])$/.exec(text.trim());
  if (!match)
    throw new UserError('usage', `--older-than ${text}: write a number and a unit, e.g. 30d, 12h, 90m`);
  return Number(match[1]) * UNIT_MS[match[2]!]!;
}

function oneLine(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > 60 ? `${flat.slice(0, 59)}…` : flat;
}
