import { DEFAULT_WORKER_CONCURRENCY } from '../../app/create-cadre.ts';
import { UserError } from '../../core/index.ts';
import { startWorkerEndpoints } from '../../server/worker-endpoints.ts';
import { type CliCommand, openCadre } from '../cli-context.ts';
import { type CommandSpec, type FlagSpec, parseCommand } from '../command-args.ts';
import { EXIT } from '../errors.ts';
import { RUN_SETUP_FLAGS } from '../run-flags.ts';
import { reportSetupNotes } from '../setup-notes.ts';

export const WORKER = {
  usage: ['cadre worker [--concurrency N] [--name NAME] [--port PORT [--host HOST]]'],
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
    port: {
      type: 'string',
      placeholder: 'PORT',
      description: 'answer GET /health and GET /ready on this port (0: a free one); none by default',
    },
    host: {
      type: 'string',
      placeholder: 'HOST',
      description: 'the address --port listens on (default 127.0.0.1)',
    },
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
  const port =
    values.port === undefined ? undefined : /^\d{1,5}$/.test(values.port) ? Number(values.port) : -1;
  if (port !== undefined && (port < 0 || port > 65535))
    throw new UserError('usage', `--port ${values.port}: expected a port number from 0 to 65535.`);
  if (values.host !== undefined && port === undefined)
    throw new UserError('usage', '--host names where --port listens: give --port too.');
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
    // Beside whatever else observes the worker (its metrics).
    const onJob = worker.onJob;
    worker.onJob = (job) => {
      onJob?.(job);
      // Tries as pg-boss counts them, less the set-asides and hand-backs (which are not tries).
      const tries = job.tries ?? job.retryCount + 1;
      log(`took ${job.kind} job ${job.id}${job.resumed ? ' (resumed)' : tries > 1 ? ` (try ${tries})` : ''}`);
    };
    const endpoints =
      port === undefined
        ? undefined
        : await startWorkerEndpoints({ cadre, host: values.host ?? '127.0.0.1', port });
    if (endpoints)
      context.stdout.write(`Cadre worker ${worker.name} answers /health and /ready on ${endpoints.url}\n`);
    const onRefused = worker.onRefused;
    worker.onRefused = (job, reason) => {
      onRefused?.(job, reason);
      log(`left ${job.kind} job ${job.id} queued: ${reason}`);
    };
    const onSetAside = worker.onSetAside;
    worker.onSetAside = (job, children) => {
      onSetAside?.(job, children);
      log(`set aside ${job.kind} job ${job.id} while ${children} sub-agent run(s) it waits on go on`);
    };
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
    await endpoints?.close();
    log('stopped');
    return EXIT.ok;
  } finally {
    await cadre.close();
  }
};
