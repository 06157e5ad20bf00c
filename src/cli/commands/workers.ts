import type { WorkerView } from '../../app/fleet.ts';
import { UserError } from '../../core/index.ts';
import { type CliCommand, openCadre } from '../cli-context.ts';
import { type CommandSpec, type FlagSpec, parseCommand } from '../command-args.ts';
import { EXIT } from '../errors.ts';
import { printableLine } from '../terminal-text.ts';

export const WORKERS = {
  usage: ['cadre workers [--json] [--silent-after SECONDS]'],
  summary:
    'The workers working the queue of the database CADRE_DATABASE_URL names: name, host, pid, slots used ' +
    'and free, and each job held with how long its run has said nothing. A worker holding a run silent ' +
    'for longer than --silent-after (queue.silentAfterSeconds in the config, default 120) is flagged stuck: ' +
    'its process is alive but its model call or tool may hang. A worker that died shows as gone until ' +
    'its jobs are handed to a live one.',
  flags: {
    json: { type: 'boolean', default: false, description: 'print the workers as JSON' },
    'silent-after': {
      type: 'string',
      placeholder: 'SECONDS',
      description: 'flag runs silent this long (default: queue.silentAfterSeconds, else 120)',
    },
    config: { type: 'string', placeholder: 'FILE', description: 'the config file to read' },
  },
} as const satisfies CommandSpec<Record<string, FlagSpec>>;

/** `cadre workers`: the live workers and what each holds; exits 1 when one is flagged stuck. */
export const workersCommand: CliCommand = async (args, context) => {
  const { values, positionals } = parseCommand(WORKERS, args);
  if (positionals.length) throw new UserError('usage', `cadre workers takes no words ("${positionals[0]}")`);
  const given = values['silent-after'];
  const silentAfterSeconds = given === undefined ? undefined : Number(given);
  if (silentAfterSeconds !== undefined && !(silentAfterSeconds > 0))
    throw new UserError('usage', `--silent-after ${given}: expected a number of seconds above 0.`);
  const cadre = await openCadre(context, { ...values, lazy: true, 'no-worker': true });
  try {
    const report = await cadre.workers({ silentAfterSeconds });
    if (values.json) {
      context.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
    } else if (!report.queue) {
      context.stdout.write(
        'No queue and no workers: this Cadre runs each question in the process that asks it (the embedded SQLite store). Set CADRE_DATABASE_URL to a postgres:// URL to run questions on `cadre worker` processes.\n',
      );
    } else {
      const alive = report.workers.filter((worker) => worker.alive);
      context.stdout.write(
        `${alive.length} worker(s) alive; a run silent for ${report.silentAfterSeconds} s or more is flagged.\n`,
      );
      for (const worker of report.workers) context.stdout.write(describeWorker(worker));
    }
    return report.queue && report.workers.some((worker) => worker.stuck) ? EXIT.notOk : EXIT.ok;
  } finally {
    await cadre.close();
  }
};

function describeWorker(worker: WorkerView): string {
  const { slots } = worker;
  const state = !worker.alive
    ? 'GONE (its lease is lost; what it held goes to a live worker)'
    : worker.stuck
      ? 'STUCK (a run it holds is silent)'
      : 'alive';
  const lines = [
    `${printableLine(worker.name)}  ${worker.host} pid ${worker.pid}  slots ${slots.used} used, ${slots.free} free of ${slots.total}  ${worker.standing ? 'standing' : 'in-process'}  ${state}`,
  ];
  for (const job of worker.jobs)
    lines.push(
      `  ${job.kind} job ${job.jobId}  run ${job.runId}${job.runId === job.rootRunId ? '' : ` (tree ${job.rootRunId})`}  held ${job.heldSeconds} s, last event ${job.silentSeconds} s ago${job.silent ? '  SILENT' : ''}`,
    );
  return `${lines.join('\n')}\n`;
}
