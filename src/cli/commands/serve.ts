import { DEFAULT_WORKER_CONCURRENCY } from '../../app/create-cadre.ts';
import { UserError } from '../../core/index.ts';
import { mcpHttpRoutes } from '../../mcp/server/http-routes.ts';
import { startServer } from '../../server/serve.ts';
import { ensureWebApp } from '../../server/web-build.ts';
import { type CliCommand, openCadre } from '../cli-context.ts';
import { type CommandSpec, type FlagSpec, parseCommand } from '../command-args.ts';
import { EXIT } from '../errors.ts';
import { NO_WORKER_FLAG } from '../run-flags.ts';
import { reportSetupNotes } from '../setup-notes.ts';

export const SERVE = {
  usage: ['cadre serve [--host 127.0.0.1] [--port 4319] [--no-worker]'],
  summary:
    'The HTTP API and the web app until Ctrl-C or SIGTERM. The first line printed is "Cadre listening on ' +
    'http://HOST:PORT". Without users (cadre users add) or CADRE_TOKEN it listens on loopback only.',
  flags: {
    host: { type: 'string', placeholder: 'HOST', description: 'address to listen on (default 127.0.0.1)' },
    port: {
      type: 'string',
      placeholder: 'PORT',
      description: 'port to listen on (default 4319; 0 takes a free one)',
    },
    model: {
      type: 'string',
      placeholder: 'P:M',
      description: 'the main model, as provider:model (over CADRE_MODEL)',
    },
    workspace: {
      type: 'string',
      placeholder: 'DIR',
      description: 'the folder the workspace tools may read (default: the current one)',
    },
    config: { type: 'string', placeholder: 'FILE', description: 'read this config file too' },
    ...NO_WORKER_FLAG,
  },
} as const satisfies CommandSpec<Record<string, FlagSpec>>;

/** `cadre serve [--host 127.0.0.1] [--port 4319]`: the HTTP API and web app until SIGINT/SIGTERM. */
export const serveCommand: CliCommand = async (args, context) => {
  const { values, positionals } = parseCommand(SERVE, args);
  if (positionals.length) throw new UserError('usage', `cadre serve takes no words ("${positionals[0]}")`);
  const cadre = await openCadre(context, values);
  reportSetupNotes(cadre, context.stderr);
  // Runs as jobs: this server works the queue too, unless --no-worker leaves that to `cadre worker`s.
  if (cadre.store.jobs && !values['no-worker'])
    await cadre.startWorker({ concurrency: DEFAULT_WORKER_CONCURRENCY, standing: true });
  ensureWebApp((line) => context.stderr.write(`${line}\n`));
  const settings = cadre.config.server ?? {};
  const host = values.host ?? settings.host ?? '127.0.0.1';
  // Digits only: Number() would read "" as 0 (a random port) and "1e3" as 1000.
  const given = values.port;
  const port = given === undefined ? (settings.port ?? 4319) : /^\d{1,5}$/.test(given) ? Number(given) : -1;
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new UserError('usage', `--port ${given}: expected a port number from 0 to 65535.`);
  const log = (line: string) => context.stdout.write(`${new Date().toISOString()} ${line}\n`);
  const mcp = mcpHttpRoutes(
    settings.maxConcurrentMcpCalls ? { limits: { maxConcurrentCalls: settings.maxConcurrentMcpCalls } } : {},
  );
  let server: Awaited<ReturnType<typeof startServer>>;
  try {
    server = await startServer({
      cadre,
      host,
      port,
      log,
      mounts: [{ path: '/mcp', routes: mcp }],
      ...(context.env.CADRE_TOKEN ? { singleUserToken: context.env.CADRE_TOKEN } : {}),
      ...(settings.allowedHosts ? { allowedHosts: settings.allowedHosts } : {}),
      ...(settings.allowedOrigins ? { allowedOrigins: settings.allowedOrigins } : {}),
      ...(settings.trustedProxies ? { trustedProxies: settings.trustedProxies } : {}),
      limits: {
        ...(settings.maxBodyBytes ? { maxBodyBytes: settings.maxBodyBytes } : {}),
        ...(settings.maxUploadBytes ? { maxUploadBytes: settings.maxUploadBytes } : {}),
        ...(settings.maxConcurrentChats ? { maxConcurrentChats: settings.maxConcurrentChats } : {}),
        ...(settings.maxJsonDepth ? { maxJsonDepth: settings.maxJsonDepth } : {}),
        ...(settings.maxFailedAuthPerMinute
          ? { maxFailedAuthPerMinute: settings.maxFailedAuthPerMinute }
          : {}),
        ...(settings.maxFilesPerUpload ? { maxFilesPerUpload: settings.maxFilesPerUpload } : {}),
        ...(settings.maxConcurrentUploads ? { maxConcurrentUploads: settings.maxConcurrentUploads } : {}),
        ...(settings.maxConcurrentUploadsTotal
          ? { maxConcurrentUploadsTotal: settings.maxConcurrentUploadsTotal }
          : {}),
      },
      ...(settings.requestTimeoutSeconds ? { requestTimeoutSeconds: settings.requestTimeoutSeconds } : {}),
      ...(settings.headersTimeoutSeconds ? { headersTimeoutSeconds: settings.headersTimeoutSeconds } : {}),
    });
  } catch (error) {
    await cadre.close();
    throw listenError(error, host, port);
  }
  await new Promise<void>((resolve) => {
    const stop = (signal: string) => {
      log(`${signal}: stopping (running answers are cancelled and stored)`);
      process.off('SIGINT', onInt);
      process.off('SIGTERM', onTerm);
      // MCP sessions first: closing them cancels their calls' trees, which are then stored with the rest.
      mcp
        .closeAll()
        .then(() => server.close())
        .then(resolve, resolve);
    };
    const onInt = () => stop('SIGINT');
    const onTerm = () => stop('SIGTERM');
    process.on('SIGINT', onInt);
    process.on('SIGTERM', onTerm);
    // Printed once the signals are handled: whoever waits for this line may stop the server at once.
    context.stdout.write(`Cadre listening on ${server.url}\n`);
  });
  log('stopped');
  return EXIT.ok;
};

/**
 * A socket that could not be opened because of the address the person chose, said as such (exit 2) with
 * what to do, instead of a bare "listen EADDRINUSE" as a system fault.
 */
function listenError(error: unknown, host: string, port: number): unknown {
  const code = (error as NodeJS.ErrnoException).code;
  const where = `${host}:${port}`;
  switch (code) {
    case 'EADDRINUSE':
      return new UserError(
        'port_in_use',
        `${where} is already in use (another cadre serve?); choose another port with --port, or --port 0 for a free one.`,
        { host, port },
      );
    case 'EACCES':
      return new UserError(
        'port_not_allowed',
        `${where}: this user may not listen on port ${port} (ports below 1024 need privileges); choose one above 1023 with --port.`,
        { host, port },
      );
    case 'EADDRNOTAVAIL':
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return new UserError(
        'bad_host',
        `--host ${host}: not an address of this machine (${code}); use 127.0.0.1, 0.0.0.0 or one of its own addresses.`,
        { host },
      );
    default:
      return error;
  }
}
