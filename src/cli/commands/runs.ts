import type { Cadre } from '../../app/create-cadre.ts';
import { unlessEnded } from '../../app/runs.ts';
import { UserError } from '../../core/index.ts';
import { approvalMode, cliApprover } from '../approval-prompt.ts';
import { type CliCommand, type CliContext, openCadre } from '../cli-context.ts';
import { answerHelp, type CommandSpec, type FlagSpec, parseCommand } from '../command-args.ts';
import { EXIT } from '../errors.ts';
import { removeEach } from '../remove-each.ts';
import { runReport } from '../run-report.ts';
import { printableLine } from '../terminal-text.ts';
import { workspaceOption } from '../workspace-option.ts';
import { answer } from './ask.ts';

export const RUNS = {
  usage: [
    'cadre runs list [--json] [--limit N] [--running]',
    'cadre runs show ID [--json | --verbose]',
    'cadre runs stop ID',
    'cadre runs say ID "TEXT"',
    'cadre runs rm ID...',
    'cadre runs prune --older-than 30d [--json]',
    'cadre runs resume ID [--json] [--approve-all | --deny-all] [--workspace DIR]',
  ],
  summary:
    'Stored run trees, newest first. show prints a tree with each tool call and its output and each ' +
    "sub-agent's summary (trimmed; --verbose prints all of it). stop ends a running run wherever it runs: " +
    "a tree's root stops the whole tree; a sub-agent's run stops alone, and its parent goes on with what " +
    'it had done. say sends a running run a message that joins its conversation at its next model step; to a finished sub-agent run it is a follow-up: that agent goes on from its own conversation as a new turn of its session, and its answer is printed (as ask prints one; --json too). A run whose process was killed shows as interrupted; resume continues it from its journal.',
  flags: {
    json: { type: 'boolean', default: false, description: 'print JSON (the run tree for show)' },
    limit: { type: 'string', placeholder: 'N', description: 'list at most N runs (default 20)' },
    running: {
      type: 'boolean',
      default: false,
      description: 'list: every run running now, sub-agents too, those in the background marked',
    },
    verbose: {
      type: 'boolean',
      default: false,
      description: 'show: whole tool inputs, outputs and summaries',
    },
    'older-than': {
      type: 'string',
      placeholder: 'AGE',
      description: 'prune: remove finished trees started longer ago than this (30d, 12h, 90m, 2w)',
    },
    'approve-all': {
      type: 'boolean',
      default: false,
      description: 'resume, say (a follow-up): approve every call that asks',
    },
    'deny-all': {
      type: 'boolean',
      default: false,
      description: 'resume, say (a follow-up): deny every call that asks',
    },
    workspace: {
      type: 'string',
      placeholder: 'DIR',
      description:
        'resume: the workspace the interrupted run had (its --workspace), so its workspace tools and bash go on there',
    },
  },
} as const satisfies CommandSpec<Record<string, FlagSpec>>;

/**
 * `cadre runs list [--json] [--limit N]` · `cadre runs show ID [--json]` · `cadre runs stop ID` · `cadre runs say ID "TEXT"` · `cadre runs rm ID...` ·
 * `cadre runs prune --older-than 30d` · `cadre runs resume ID`
 */
export const runsCommand: CliCommand = async (args, context) => {
  const [sub, ...rest] = args;
  answerHelp(RUNS, args);
  const { values, positionals } = parseCommand(RUNS, rest);
  if (sub === 'resume') return resumeCommand(positionals, values, context);
  const cadre = await openCadre(context, { lazy: true });
  try {
    return await runCommand(cadre, sub, values, positionals, context);
  } finally {
    await cadre.close();
  }
};

async function runCommand(
  cadre: Cadre,
  sub: string | undefined,
  values: {
    json: boolean;
    limit?: string | undefined;
    'older-than'?: string | undefined;
    verbose: boolean;
    running: boolean;
    'approve-all': boolean;
    'deny-all': boolean;
  },
  positionals: string[],
  context: CliContext,
): Promise<number> {
  if ((sub === 'list' || sub === undefined) && values.running) {
    const runs = await cadre.runs.running(context.userId);
    if (values.json) {
      context.stdout.write(`${JSON.stringify({ runs }, null, 2)}\n`);
      return EXIT.ok;
    }
    if (!runs.length) context.stdout.write('Nothing is running.\n');
    for (const run of runs) {
      const where = run.parentId === null ? 'root' : run.background ? 'background' : `under ${run.parentId}`;
      context.stdout.write(
        `${run.parentId === null ? '' : '  '}${run.id}  ${run.startedAt}  ${run.agent}  ${where}  ${oneLine(run.task)}\n`,
      );
    }
    const background = runs.filter((run) => run.background).length;
    if (background) context.stdout.write(`${background} running in the background.\n`);
    return EXIT.ok;
  }
  if (sub === 'list' || sub === undefined) {
    const limit = values.limit === undefined ? 20 : Number(values.limit);
    if (!Number.isSafeInteger(limit) || limit < 1)
      throw new UserError('usage', `--limit ${values.limit}: expected a positive whole number`);
    const runs = await cadre.runs.list(context.userId, { limit });
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
    const tree = await cadre.runs.get(context.userId, id);
    if (values.json) {
      context.stdout.write(`${JSON.stringify(tree, null, 2)}\n`);
      return EXIT.ok;
    }
    const events = (await cadre.runs.storedEvents(context.userId, tree.id)).map(({ event }) => event);
    context.stdout.write(runReport(tree, events, { verbose: values.verbose }));
    return EXIT.ok;
  }
  if (sub === 'stop') {
    const id = positionals[0];
    if (!id || positionals.length > 1) throw new UserError('usage', 'usage: cadre runs stop ID');
    const { cancelled } = await cadre.runs.cancel(context.userId, id);
    const tree = cancelled ? undefined : await cadre.runs.get(context.userId, id).catch(() => undefined);
    if (values.json) {
      context.stdout.write(`${JSON.stringify({ runId: id, cancelled })}\n`);
    } else if (cancelled) {
      context.stdout.write(`Stopped run ${id}.\n`);
    } else {
      context.stderr.write(`cadre: run ${id} is not running${tree ? ` (it ended ${tree.status})` : ''}.\n`);
    }
    return cancelled ? EXIT.ok : EXIT.notOk;
  }
  if (sub === 'say') {
    const [id, ...words] = positionals;
    // An empty or blank TEXT is named as such by the message's own check (`The message is empty.`).
    if (!id || !words.length) throw new UserError('usage', 'usage: cadre runs say ID "TEXT"');
    const text = words.join(' ');
    const sent = await cadre.runs.say(context.userId, id, text).catch(unlessEnded);
    // A run that has ended: the message follows it up (a finished sub-agent run goes on from its
    // conversation as a new turn of its session), answered here as `cadre ask` answers.
    if (!sent)
      return await answer(
        cadre,
        text,
        { ...values, events: false, input: [], sessionId: undefined, continues: id },
        { rootLimits: {}, treeBudget: undefined },
        context,
      );
    const { messageId } = sent;
    context.stdout.write(
      values.json
        ? `${JSON.stringify({ runId: id, messageId })}\n`
        : `Sent to run ${id}: it joins the run's next step.\n`,
    );
    return EXIT.ok;
  }
  if (sub === 'rm') {
    if (!positionals.length) throw new UserError('usage', 'usage: cadre runs rm ID...');
    return removeEach(
      positionals,
      async (id) => {
        await cadre.runs.remove(context.userId, id);
        return `Removed run ${id} and its sub-agent runs.`;
      },
      context,
    );
  }
  if (sub === 'prune') {
    const olderThan = values['older-than'];
    if (!olderThan)
      throw new UserError('usage', 'usage: cadre runs prune --older-than 30d (s, m, h, d or w)');
    const age = parseDuration(olderThan);
    const now = Date.now();
    const removed = await cadre.runs.prune(context.userId, age, now);
    context.stdout.write(
      values.json
        ? `${JSON.stringify({ removed })}\n`
        : `Removed ${removed} run tree${removed === 1 ? '' : 's'} started before ${new Date(now - age).toISOString()}.\n`,
    );
    return EXIT.ok;
  }
  throw new UserError(
    'usage',
    `unknown runs command "${sub}"; use list, show ID, stop ID, say ID "TEXT", rm ID, prune --older-than 30d or resume ID`,
  );
}

/**
 * `cadre runs resume ID [--json] [--approve-all | --deny-all] [--workspace DIR]`: continues an interrupted
 * tree, in the workspace the person names (a tree of `cadre ask --workspace DIR` needs it for its tools).
 */
async function resumeCommand(
  positionals: string[],
  values: { json: boolean; 'approve-all': boolean; 'deny-all': boolean; workspace?: string | undefined },
  context: CliContext,
): Promise<number> {
  const id = positionals[0];
  if (!id)
    throw new UserError(
      'usage',
      'usage: cadre runs resume ID [--json] [--approve-all | --deny-all] [--workspace DIR]',
    );
  const mode = approvalMode(values['approve-all'], values['deny-all']);
  const cadre = await openCadre(
    context,
    values.workspace ? { workspace: workspaceOption(values.workspace, context.cwd) } : {},
  );
  try {
    const resumed = await cadre.resume({
      userId: context.userId,
      runId: id,
      approver: cliApprover({ mode, stdin: context.stdin ?? process.stdin, stderr: context.stderr }),
    });
    const result = await resumed.result;
    if (values.json) {
      const { answer, status, sessionId, run, usage, resumedFrom } = result;
      context.stdout.write(
        `${JSON.stringify({ answer, status, sessionId, resumedFrom, run, usage }, null, 2)}\n`,
      );
    } else {
      context.stderr.write(`cadre: resumed ${result.resumedFrom} as ${result.runId}\n`);
      context.stdout.write(`${result.answer}\n`);
    }
    return result.status === 'ok' ? EXIT.ok : EXIT.notOk;
  } finally {
    await cadre.close();
  }
}

const UNIT_MS: Record<string, number> = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };

/** "30d", "12h", "90m": a duration in milliseconds. */
function parseDuration(text: string): number {
  const match = /^(\d+)\s*([smhdw])$/.exec(text.trim());
  if (!match)
    throw new UserError('usage', `--older-than ${text}: write a number and a unit, e.g. 30d, 12h, 90m`);
  const ms = Number(match[1]) * UNIT_MS[match[2]!]!;
  // Past 1970 no run can be, and past ~270,000 years no date can be written (Date is then invalid).
  if (ms > Date.now())
    throw new UserError('usage', `--older-than ${text}: that reaches back before 1970; no run is that old`);
  return ms;
}

/** A task on one line: it may hold what was piped in or what an MCP client sent, so no control sequences. */
function oneLine(text: string): string {
  const flat = printableLine(text);
  return flat.length > 60 ? `${flat.slice(0, 59)}…` : flat;
}
