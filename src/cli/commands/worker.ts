import { DEFAULT_WORKER_CONCURRENCY } from '../../app/create-cadre.ts';
import { UserError } from '../../core/index.ts';
import { type CliCommand, openCadre } from '../cli-context.ts';
import { type CommandSpec, type FlagSpec, parseCommand } from '../command-args.ts';
import { EXIT } from '../errors.ts';
import { RUN_SETUP_FLAGS } from '../run-flags.ts';
import { reportSetupNotes } from '../setup-notes.ts';

export const WORKER = {
  usage: ['cadre worker [--concurrency N] [--name NAME]'],
  summary:
    'Runs trees and sub-agent runs from the queue in the database CADRE_DATABASE_URL names, N at a time ' +
    '(a parent waiting on its sub-agents takes no slot), until SIGTERM or Ctrl-C. Prints a line with ' +
    '"ready" once it takes work. Start as many as you like, on any machine that reaches the database ' +
    'and the model providers.',
  flags: {
    concurrency: {
      type: 'string',
      placeholder: 'N',
      description: `runs at once (default ${DEFAULT_WORKER_CONCURRENCY})`,
    },
    name: { type: 'string', placeholder: 'NAME', description: 'the name runs record (default host:pid)' },
    ...RUN_SETUP_FLAGS,
  },
} as const satisfies CommandSpec<Record<string, FlagSpec>>;

/** `cadre worker`: works the queue of runs (the PostgreSQL mode) until SIGINT/SIGTERM. */
export const workerCommand: CliCommand = async (args, context) => {
  const { values, positionals } = parseCommand(WORKER, args);
  if (positionals.length) throw new UserError('usage', `cadre worker takes no words ("${positionals[0]}")`);
  const given = values.concurrency;
  const concurrency =
    given === undefined ? DEFAULT_WORKER_CONCURRENCY : /^\d{1,4}$/.test(given) ? Number(given) : 0;
  if (concurrency < 1)
    throw new UserError('usage', `--concurrency ${given}: expected a whole number from 1 to 9999.`);
  const cadre = await openCadre(context, { ...values, 'no-worker': true });
  try {
    if (!cadre.store.jobs)
      throw new UserError(
        'no_queue',
        'cadre worker runs jobs from a database several processes share: set CADRE_DATABASE_URL (or database.url in the config) to a postgres:// URL.',
      );
    reportSetupNotes(cadre, context.stderr);
    const log = (line: string) => context.stdout.write(`${new Date().toISOString()} ${line}\n`);
    const worker = await cadre.startWorker({
      concurrency,
      standing: true,
      ...(values.name ? { name: values.name } : {}),
    });
    worker.onJob = (job) =>
      log(
        `took ${job.kind} job ${job.id}${job.resumed ? ' (resumed)' : job.retryCount ? ` (try ${job.retryCount + 1})` : ''}`,
      );
    worker.onSetAside = (job, children) =>
      log(`set aside ${job.kind} job ${job.id} while ${children} sub-agent run(s) it waits on go on`);
    await new Promise<void>((resolve) => {
      const stop = (signal: string) => {
        process.off('SIGINT', onInt);
        process.off('SIGTERM', onTerm);
        log(`${signal}: taking no more jobs; running ones finish or go back to the queue`);
        worker.stop().then(resolve, resolve);
      };
      const onInt = () => stop('SIGINT');
      const onTerm = () => stop('SIGTERM');
      process.on('SIGINT', onInt);
      process.on('SIGTERM', onTerm);
      context.stdout.write(`Cadre worker ${worker.name} ready (concurrency ${worker.concurrency})\n`);
    });
    log('stopped');
    return EXIT.ok;
  } finally {
    await cadre.close();
  }
};
