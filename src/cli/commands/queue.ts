import type { QueueReport } from '../../app/fleet.ts';
import { UserError } from '../../core/index.ts';
import { approvalMode, cliApprover } from '../approval-prompt.ts';
import { type CliCommand, type CliContext, openCadre } from '../cli-context.ts';
import { answerHelp, type CommandSpec, type FlagSpec, parseCommand } from '../command-args.ts';
import { EXIT } from '../errors.ts';
import { printableLine } from '../terminal-text.ts';

export const QUEUE = {
  usage: ['cadre queue [--json]', 'cadre queue retry ID [--json]', 'cadre queue drop ID'],
  summary:
    'The queue of runs in the database CADRE_DATABASE_URL names: jobs per kind and state, parents set ' +
    'aside while their sub-agents run, the oldest wait, and the dead letters (jobs that failed on every ' +
    'try, with why; kept until dropped, or for 7 days). retry ID goes on with a dead tree from its journal ' +
    'as a new attempt (for the person who asked it) and prints its answer; drop ID forgets a dead letter. ' +
    'ID is a job id or the run id of its tree.',
  flags: {
    json: { type: 'boolean', default: false, description: 'print JSON' },
    'approve-all': { type: 'boolean', default: false, description: 'retry: approve every call that asks' },
    'deny-all': { type: 'boolean', default: false, description: 'retry: deny every call that asks' },
    config: { type: 'string', placeholder: 'FILE', description: 'the config file to read' },
  },
} as const satisfies CommandSpec<Record<string, FlagSpec>>;

type QueueValues = { json: boolean; 'approve-all': boolean; 'deny-all': boolean };

/** `cadre queue [retry ID | drop ID]`: the queue as an operator sees it, and its dead letters dealt with. */
export const queueCommand: CliCommand = async (args, context) => {
  answerHelp(QUEUE, args);
  const { values, positionals } = parseCommand(QUEUE, args);
  const [sub, id, ...rest] = positionals;
  if (sub !== undefined && sub !== 'retry' && sub !== 'drop')
    throw new UserError('usage', `cadre queue: unknown sub-command "${sub}" (retry ID, drop ID)`);
  if (sub && (!id || rest.length)) throw new UserError('usage', `usage: cadre queue ${sub} ID`);
  // A retry's tree runs on the workers (or here, when none is running); looking runs nothing.
  const cadre = await openCadre(context, { config: values.config, lazy: true, 'no-worker': sub !== 'retry' });
  try {
    if (sub === 'drop') {
      const dropped = await cadre.dropJob(id!);
      if (values.json) context.stdout.write(`${JSON.stringify({ dropped })}\n`);
      else context.stdout.write(`Dropped ${dropped.kind} job ${dropped.jobId} (run ${dropped.runId}).\n`);
      return EXIT.ok;
    }
    if (sub === 'retry') return await retry(cadre, id!, values, context);
    const report = await cadre.queue();
    if (values.json) context.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
    else if (!report.queue)
      context.stdout.write(
        'No queue: this Cadre runs each question in the process that asks it (the embedded SQLite store); `cadre runs list` shows what runs. Set CADRE_DATABASE_URL to a postgres:// URL to queue questions for `cadre worker` processes.\n',
      );
    else context.stdout.write(describeQueue(report));
    return EXIT.ok;
  } finally {
    await cadre.close();
  }
};

async function retry(
  cadre: Awaited<ReturnType<typeof openCadre>>,
  id: string,
  values: QueueValues,
  context: CliContext,
): Promise<number> {
  const mode = approvalMode(values['approve-all'], values['deny-all']);
  const retried = await cadre.retryJob(id, {
    approver: cliApprover({ mode, stdin: context.stdin ?? process.stdin, stderr: context.stderr }),
  });
  context.stderr.write(
    `cadre: retrying ${retried.job.kind} job ${retried.job.jobId}: run ${retried.resumedFrom} goes on as ${retried.rootRunId}\n`,
  );
  const result = await retried.result;
  if (values.json) {
    const { answer, status, sessionId, run, usage, resumedFrom } = result;
    context.stdout.write(
      `${JSON.stringify({ answer, status, sessionId, resumedFrom, run, usage }, null, 2)}\n`,
    );
  } else context.stdout.write(`${result.answer}\n`);
  return result.status === 'ok' ? EXIT.ok : EXIT.notOk;
}

function describeQueue(report: QueueReport): string {
  const lines: string[] = [];
  const kinds = ['tree', 'run', 'dead'] as const;
  for (const kind of kinds) {
    const states = report.depth.filter((entry) => entry.kind === kind);
    const label = kind === 'dead' ? 'dead letters not yet recorded' : `${kind} jobs`;
    lines.push(
      `${label}: ${states.length ? states.map((entry) => `${entry.count} ${entry.state}`).join(', ') : 'none'}`,
    );
  }
  const oldest = report.oldestWaitingSeconds;
  lines.push(`oldest waiting: tree ${oldest.tree} s, run ${oldest.run} s`);
  lines.push(`set aside while their sub-agents run: ${report.setAside.length}`);
  for (const job of report.setAside)
    lines.push(
      `  ${job.kind} job ${job.jobId}  run ${job.runId}  waits on ${job.waitingOn} sub-agent run(s), for ${job.sinceSeconds} s`,
    );
  lines.push(`failed on every try (dead letters): ${report.failures.length}`);
  for (const job of report.failures)
    lines.push(
      `  ${job.kind} job ${job.jobId}  run ${job.runId}${job.userId ? ` of ${job.userId}` : ''}  ${job.tries} tries, failed ${job.failedAt}`,
      `    ${printableLine(job.error)}`,
    );
  if (report.failures.length)
    lines.push('  cadre queue retry ID goes on with one; cadre queue drop ID forgets it.');
  return `${lines.join('\n')}\n`;
}
