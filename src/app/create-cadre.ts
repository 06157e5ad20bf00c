import { mkdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { LanguageModelV4 } from '@ai-sdk/provider';
import type { AgentCatalog } from '../agents/loader.ts';
import { type LoadedConfig, loadConfig } from '../config/load-config.ts';
import type { CadreConfig } from '../config/schema.ts';
import { type ApprovalSettings, DEFAULT_APPROVAL_TIMEOUT_MS } from '../core/approvals.ts';
import { SystemError, UserError } from '../core/errors.ts';
import { EventBus } from '../core/events.ts';
import type { Runtime } from '../core/runtime.ts';
import type { CadreTool } from '../core/tool.ts';
import type { ToolRegistry } from '../core/tool-registry.ts';
import { createModelResolver, parseModelRef } from '../models/resolve-model.ts';
import { DEFAULT_RETRY, type RetryPolicy } from '../models/retry.ts';
import { openStore } from '../store/open-store.ts';
import type { Store } from '../store/store.ts';
import { stopSandboxRuntime } from '../tools/coding/command-sandbox.ts';
import { stopStaleSandboxBridges } from '../tools/coding/sandbox-bridges.ts';
import { McpClients } from '../tools/mcp/mcp-clients.ts';
import type { Workspaces } from '../tools/workspace/workspaces.ts';
import { logProviderWarnings } from './provider-warnings.ts';

export type { CadreParts, Store, Wiring };

import type { UserStore } from '../store/user-store.ts';
import { AgentsView } from './agents-view.ts';
import { type ApprovalDesk, ApprovalSigner, PendingApprovals } from './approvals.ts';
import { type AskParts, type AskRequest, type AskRun, ask } from './ask.ts';
import type { CadreParts, RuntimeOptions, Wiring } from './cadre-parts.ts';
import { type CompleteRequest, complete } from './complete.ts';
import { DocumentsUseCases } from './documents.ts';
import type { FleetParts, JobView, QueueReport, WorkersReport } from './fleet.ts';
import { InProcessTrees } from './in-process-trees.ts';
import type { JobMode } from './jobs/job-mode.ts';
import type { TreeWorker } from './jobs/tree-worker.ts';
import { LiveRuns } from './live-runs.ts';
import type { CadreMetrics } from './metrics.ts';
import { ModelsUseCases } from './models.ts';
import { type Readiness, readiness } from './readiness.ts';
import { type ResumeParts, type ResumeRequest, resumeRun } from './resume.ts';
import { RunsUseCases, unlessEnded } from './runs.ts';
import { SessionsUseCases } from './sessions.ts';
import { SettingsUseCases } from './settings.ts';
import { startTracing, type Tracing } from './telemetry/index.ts';
import type { TreeExecutor } from './tree-executor.ts';
import type { TreeHandle } from './tree-handle.ts';
import { attachTree } from './trees.ts';
import { UserRuntimes } from './user-runtimes.ts';
import { userWorkspaces } from './user-workspaces.ts';
import { VERSION } from './version.ts';

export interface CadreOptions {
  env: Record<string, string | undefined>;
  cwd: string;
  configFile?: string;
  /** Command-line flags in config shape (e.g. `{ model }` from `--model`). */
  flags?: CadreConfig;
  /** Root for the workspace tools; defaults to `cwd`. */
  workspace?: string;
  /** Models by reference that bypass providers (tests, demos). */
  models?: Record<string, LanguageModelV4>;
  /** The store; defaults to the SQLite file `$CADRE_HOME/cadre.db`. Cadre closes only a store it opened. */
  store?: Store;
  /**
   * Tools found at start-up (e.g. from MCP servers), added to the registry before agent definitions are
   * validated, so a definition may name them.
   */
  discoverTools?: (context: {
    config: CadreConfig;
    env: Record<string, string | undefined>;
  }) => Promise<CadreTool[]>;
  /**
   * Load the tools and agent definitions on first need instead of at once: commands that only read stored
   * runs, sessions or documents start in half the time.
   */
  lazy?: boolean;
  /**
   * With a store that runs trees as jobs (PostgreSQL): whether this process works the queue too (default
   * true, `--no-worker` false), and with how many slots.
   */
  worker?: boolean | { concurrency: number };
}

/** How long a question waits for a worker to take it before it is withdrawn and its asker told. */
export const DEFAULT_WAIT_TIMEOUT_SECONDS = 600;

/** Slots of the worker a process runs beside its front door when runs are jobs (`cadre worker` sets its own). */
export const DEFAULT_WORKER_CONCURRENCY = 4;

/**
 * The composition root: configuration, store, tool registry, agent catalog and model resolver, wired
 * once, and the use cases every front door calls (ask, agents, documents, runs, sessions, settings), each
 * acting for one user. The CLI, the server and the MCP server are thin adapters over these.
 */
export class Cadre {
  readonly config: CadreConfig;
  /** Configuration that was read but not applied, and why; the CLI prints these. */
  readonly warnings: string[];
  readonly home: string;
  readonly store: Store;
  /** Every event of every run in this process (the store listens here, and so may live views). */
  readonly bus = new EventBus();
  readonly workspace: string;
  readonly env: Record<string, string | undefined>;
  /** Server users and their token hashes (`cadre users`). */
  get users(): UserStore {
    return this.store.users;
  }
  readonly resolveModel: (ref: string) => LanguageModelV4 | Promise<LanguageModelV4>;
  readonly retry: RetryPolicy;
  readonly agents: AgentsView;
  readonly documents: DocumentsUseCases;
  readonly runs: RunsUseCases;
  /** The models the set-up providers offer (`GET /api/models`), and whether a chosen one can run. */
  readonly models: ModelsUseCases;
  readonly sessions: SessionsUseCases;
  readonly settings: SettingsUseCases;
  /** OpenTelemetry export of every run's spans, when `OTEL_EXPORTER_OTLP_ENDPOINT` is set. */
  readonly tracing: Tracing | undefined;
  /** This process's metrics (`/metrics`), when the config turns them on (`"metrics": true`). */
  readonly metrics: CadreMetrics | undefined;
  /** Trees running in this process: how to stop and follow them. */
  readonly live = new LiveRuns();
  /** The configured MCP servers; each starts when a run first needs its tools. */
  readonly mcp: McpClients;
  /** What the folder Cadre runs in asks to start, and whether the person trusts it (`cadre mcp trust`). */
  readonly project: LoadedConfig['project'];
  /** True when the caller named the workspace (`--workspace`); main then reads it with its own tools. */
  readonly workspaceGiven: boolean;
  /** Each user's root: the operator's workspace for `local`, their own or none for a shared server's users. */
  readonly workspaces: Workspaces;
  /** Tool calls waiting for a person, answered by the API, the web app or a prompt. */
  readonly approvals: ApprovalDesk;
  #ownsStore: boolean;
  #detachStore: () => void;
  #options: CadreOptions;
  #discovered: CadreTool[];
  #wiring: Promise<Wiring> | undefined;
  #wired: Wiring | undefined;
  /** Journals whose resume has started in this process. */
  #resuming = new Set<string>();
  /** Where this process's trees run (see `#treeParts`). */
  #executor: TreeExecutor | undefined;
  /** The worker this process runs when runs are jobs (started with the first tree, or by `startWorker`). */
  #worker: Promise<TreeWorker> | undefined;
  /** The job-mode classes, when runs are jobs. */
  readonly #jobs: JobMode | undefined;
  /** Each user's composed agents and runtimes, built again only when what composes them changed. */
  #runtimes: UserRuntimes;

  /** Reads configuration, opens the store, discovers start-up tools, and wires everything. */
  static async create(options: CadreOptions): Promise<Cadre> {
    // Sandbox bridges a SIGKILLed Cadre left running (sandbox-bridges.ts) go now, not at the next user's bash.
    stopStaleSandboxBridges();
    const loaded = loadConfig({
      env: options.env,
      cwd: options.cwd,
      ...(options.configFile ? { configFile: options.configFile } : {}),
      ...(options.flags ? { flags: options.flags } : {}),
    });
    const discovered = options.discoverTools
      ? await options.discoverTools({ config: loaded.config, env: options.env })
      : [];
    const store =
      options.store ??
      (await openStore({
        file: join(homeFolder(loaded.home), 'cadre.db'),
        databaseUrl: loaded.config.database?.url,
      }));
    // Runs left "running" by a process that was killed (SIGKILL, a closed terminal) are closed now.
    await store.runs.markInterrupted();
    // What only runs as jobs or a metrics endpoint need is loaded when they are used: a one-shot
    // `cadre ask` on SQLite sends its first model request without loading either.
    const [jobs, metrics] = await Promise.all([
      store.jobs ? import('./jobs/job-mode.ts') : undefined,
      loaded.config.metrics
        ? import('./metrics.ts').then(({ CadreMetrics }) => new CadreMetrics())
        : undefined,
    ]);
    const cadre = new Cadre(options, {
      ...loaded,
      store,
      ownsStore: !options.store,
      discovered,
      jobs,
      metrics,
    });
    if (!options.lazy) await cadre.wiring();
    return cadre;
  }

  private constructor(
    options: CadreOptions,
    wired: {
      project: LoadedConfig['project'];
      config: CadreConfig;
      warnings: string[];
      home: string;
      store: Store;
      ownsStore: boolean;
      discovered: CadreTool[];
      /** The job-mode classes, loaded when the store has a queue. */
      jobs: JobMode | undefined;
      metrics: CadreMetrics | undefined;
    },
  ) {
    this.config = wired.config;
    this.warnings = wired.warnings;
    this.project = wired.project;
    this.mcp = new McpClients(this.config.mcpServers ?? {}, { clientVersion: VERSION });
    this.home = wired.home;
    this.env = options.env;
    this.workspace = options.workspace ?? options.cwd;
    this.workspaceGiven = options.workspace !== undefined;
    this.workspaces = userWorkspaces({
      workspace: this.workspace,
      home: this.home,
      config: this.config.multiUser,
    });
    this.store = wired.store;
    this.#ownsStore = wired.ownsStore;
    this.#detachStore = this.bus.subscribe((event) => this.store.runs.record(event));
    this.#options = options;
    this.#discovered = wired.discovered;
    this.retry = { ...DEFAULT_RETRY, ...(this.config.retry ?? {}) };
    logProviderWarnings(this.home);
    this.tracing = startTracing(options.env, this.bus, VERSION);
    const store = this.store;
    this.#jobs = wired.jobs;
    this.metrics = wired.metrics;
    this.metrics?.watchRuns(this.bus);
    if (this.metrics && store.jobs) this.metrics.watchQueue(() => store.jobs!());
    // Runs as jobs ask on any worker and are answered from any process: the requests and the signing
    // secret live in the database. In process, a file in CADRE_HOME holds the secret.
    this.approvals = wired.jobs
      ? new wired.jobs.SharedApprovals(() => store.jobs!())
      : new PendingApprovals(ApprovalSigner.forFile(join(this.home, 'approval.key')));
    this.resolveModel = createModelResolver({
      env: options.env,
      retry: this.retry,
      ...(options.models ? { overrides: options.models } : {}),
    });
    this.#runtimes = new UserRuntimes({
      config: this.config,
      store: this.store,
      wiring: () => this.wiring(),
      home: this.home,
      workspace: this.workspace,
      workspaceGiven: this.workspaceGiven,
      workspaces: this.workspaces,
      mcp: this.mcp,
      bus: this.bus,
      resolveModel: (ref) => this.resolveModel(ref),
      approvals: () => this.approvalSettings(),
      settings: () => this.settings,
    });
    const parts: CadreParts = {
      userChanged: (userId) => this.#runtimes.changed(userId),
      config: this.config,
      store: this.store,
      wiring: () => this.wiring(),
      workspace: this.workspace,
      bus: this.bus,
      live: this.live,
      mcp: this.mcp,
      unknownProvider: (ref) => this.unknownProvider(ref),
    };
    this.settings = new SettingsUseCases(parts);
    this.agents = new AgentsView(parts, this.settings, (userId) => this.runtime({ userId }));
    this.documents = new DocumentsUseCases(parts);
    this.sessions = new SessionsUseCases(parts);
    this.runs = new RunsUseCases(parts);
    this.models = new ModelsUseCases(parts, this.settings, {
      env: options.env,
      ...(options.models ? { overrides: options.models } : {}),
    });
  }

  /**
   * Why no run could resolve model `ref` (a provider Cadre does not know), or undefined when one could:
   * a known provider, or a model this Cadre was given by reference (tests, `cadre/testing`). Keys and
   * servers are the run's to check: they may be set by then.
   */
  unknownProvider(ref: string): string | undefined {
    if (this.#options.models?.[ref]) return undefined;
    try {
      parseModelRef(ref);
      return undefined;
    } catch (error) {
      if (UserError.isInstance(error)) return error.message;
      throw error;
    }
  }

  /** Loads the tools (built-in and discovered) and the agent definitions, validated against them; once. */
  wiring(): Promise<Wiring> {
    this.#wiring ??= (async () => {
      const [{ createToolRegistry }, { loadAgentCatalog }] = await Promise.all([
        import('../tools/index.ts'),
        import('../agents/loader.ts'),
      ]);
      const tools = createToolRegistry({
        env: this.env,
        documents: this.store.documents,
        httpCache: this.store.httpCache,
        workspaceRoot: this.workspace,
        workspaces: this.workspaces,
        settings: (this.config.tools ?? {}) as Record<string, unknown>,
        extra: this.#discovered,
      });
      tools.addSource(this.mcp);
      const catalog = loadAgentCatalog({
        cadreHome: this.home,
        cwd: this.#options.cwd,
        toolExists: (name) => tools.has(name),
        ...(this.config.limits?.maxDefinitionBytes
          ? { maxDefinitionBytes: this.config.limits.maxDefinitionBytes }
          : {}),
      });
      const prefetchAgent = this.config.delegation?.prefetch?.agent;
      if (prefetchAgent !== undefined && !catalog.agents.has(prefetchAgent)) {
        // Otherwise prefetch would quietly not run: the field is named, with the agents there are.
        throw new UserError(
          'config_invalid',
          `delegation.prefetch.agent: there is no agent named "${prefetchAgent}". Known agents: ${[...catalog.agents.keys()].sort().join(', ')}.`,
          { field: 'delegation.prefetch.agent' },
        );
      }
      this.#wired = { tools, catalog };
      return this.#wired;
    })();
    return this.#wiring;
  }

  /** The tool registry (after `create()`, or once a use case needed it when `lazy`). */
  get tools(): ToolRegistry {
    return this.#loaded().tools;
  }

  /** The agent definitions with where each came from, and the files that were skipped. */
  get catalog(): AgentCatalog {
    return this.#loaded().catalog;
  }

  #loaded(): Wiring {
    if (!this.#wired)
      throw new SystemError('not_wired', 'Cadre was created lazily: await cadre.wiring() first.');
    return this.#wired;
  }

  /** What the tree use cases (ask, complete, resume) need of this Cadre. */
  get #treeParts(): AskParts & ResumeParts {
    const store = this.store;
    // Where trees run, chosen once: as jobs on the store's queue (PostgreSQL), else in this process.
    const jobs = this.#jobs;
    this.#executor ??= jobs
      ? new jobs.QueuedTrees({
          store,
          live: this.live,
          approvals: this.approvals,
          waitTimeoutMs: waitTimeoutMs(this.config.queue?.waitTimeoutSeconds),
          pricing: this.config.pricing,
          jobs: async () => {
            const queue = await store.jobs!();
            const wanted = this.#options.worker ?? true;
            if (wanted !== false)
              await this.startWorker(
                typeof wanted === 'object' ? wanted : { concurrency: DEFAULT_WORKER_CONCURRENCY },
              );
            return queue;
          },
        })
      : new InProcessTrees({ store, live: this.live, home: this.home, pricing: this.config.pricing });
    return {
      store,
      live: this.live,
      executor: this.#executor,
      runtime: (options) => this.runtime(options),
      delegation: (userId) => this.#runtimes.delegation(userId),
      pricing: this.config.pricing,
      resuming: this.#resuming,
    };
  }

  /**
   * Asks the main agent (or a named one) in a session, for one user: the person's message is stored,
   * the run starts, and the returned handle streams its events and resolves to the answer, which is
   * stored too. Resolves once the run has started; a bad request (unknown session or agent, no model)
   * rejects.
   */
  ask(request: AskRequest): Promise<AskRun> {
    return ask(this.#treeParts, request);
  }

  /**
   * A person's message to a run (`POST /api/runs/:id/messages`, `cadre runs say`): a running run takes it
   * at its next model step; a finished sub-agent run is followed up by it, as a new turn of its session
   * answered by that agent from the run's kept conversation (follow-up.ts), whose handle comes back.
   */
  async say(
    request: Omit<AskRequest, 'message' | 'continues'> & { runId: string; text: string },
  ): Promise<{ messageId: string } | { followUp: AskRun }> {
    const { runId, text, ...rest } = request;
    const sent = await this.runs.say(request.userId, runId, text).catch(unlessEnded);
    if (sent) return sent;
    return { followUp: await this.ask({ ...rest, message: text, continues: runId }) };
  }

  /** Runs one agent on a conversation the caller keeps (no session), e.g. the OpenAI-compatible door. */
  complete(request: CompleteRequest): Promise<TreeHandle> {
    return complete(this.#treeParts, request);
  }

  /** Continues an interrupted tree from its journal; resolves with the new attempt once it has started. */
  resume(request: ResumeRequest): ReturnType<typeof resumeRun> {
    return resumeRun(this.#treeParts, request);
  }

  /**
   * The handle of the user's tree holding `runId`, wherever it runs (this process, another one on the
   * same store) or ended; undefined when the user has no such run.
   */
  attach(userId: string, runId: string): Promise<TreeHandle | undefined> {
    return attachTree(this.#treeParts, userId, runId);
  }

  /**
   * The runtime for one request on behalf of `userId`: agents composed for what is relevant to them, built
   * once per user and set of limits and models (`UserRuntimes`): one store read per request.
   */
  runtime(options: RuntimeOptions): Promise<Runtime> {
    return this.#runtimes.runtime(options);
  }

  /**
   * Whether this process can answer questions now (`GET /ready`): the database answers and is migrated
   * as this code expects, and, when questions run as jobs and this process runs none (`--no-worker`, or a
   * server whose worker was not started), a worker is alive.
   */
  readiness(): Promise<Readiness> {
    // A process that works the queue (or will, with its first question) needs no other worker.
    const worksTheQueue = this.#options.worker !== false || this.#worker !== undefined;
    return readiness({ store: this.store }, { needsWorker: !worksTheQueue });
  }

  /**
   * The workers the database knows (`cadre workers`), with the runs each holds flagged when silent past
   * `queue.silentAfterSeconds` (or `silentAfterSeconds`); `{queue: false}` when runs are not jobs. (The
   * fleet's use cases are loaded when used: a `cadre ask` never needs them.)
   */
  async workers(options: { silentAfterSeconds?: number | undefined } = {}): Promise<WorkersReport> {
    const { workersReport } = await import('./fleet.ts');
    return workersReport(this.#fleet(), {
      silentAfterSeconds: options.silentAfterSeconds ?? this.config.queue?.silentAfterSeconds,
    });
  }

  /** The queue (`cadre queue`): its depth, parents set aside, the oldest wait, the dead letters. */
  async queue(): Promise<QueueReport | { queue: false }> {
    const { queueReport } = await import('./fleet.ts');
    return queueReport(this.#fleet());
  }

  /** Drops a dead letter an operator dealt with (`cadre queue drop`). */
  async dropJob(id: string): Promise<JobView> {
    const { dropDeadLetter } = await import('./fleet.ts');
    return dropDeadLetter(this.#fleet(), id);
  }

  /**
   * Retries a dead letter (`cadre queue retry`): its tree goes on from its journal as a new attempt, for
   * the user who asked it, and the dead letter is dropped once the attempt is under way.
   */
  async retryJob(
    id: string,
    request: Omit<ResumeRequest, 'userId' | 'runId' | 'failed'> = {},
  ): Promise<Awaited<ReturnType<typeof resumeRun>> & { job: JobView }> {
    const { retryTarget } = await import('./fleet.ts');
    const job = await retryTarget(this.#fleet(), id);
    const handle = await this.resume({ ...request, userId: job.userId, runId: job.rootRunId, failed: true });
    await this.store.jobs!().then((jobs) => jobs.drop(job.kind, job.jobId));
    return { ...handle, job };
  }

  /** The store's queue, for the fleet's use cases (none on the embedded store). */
  #fleet(): FleetParts {
    const store = this.store;
    return { jobs: store.jobs ? () => store.jobs!() : undefined };
  }

  /** Prometheus's text for `/metrics`, or undefined when the config does not turn metrics on. */
  async metricsText(): Promise<string | undefined> {
    return this.metrics?.text();
  }

  /** The configured approval rules, with the pending list as the approver unless a request brings its own. */
  approvalSettings(): ApprovalSettings {
    const approvals = this.config.approvals ?? {};
    return {
      rules: { allow: approvals.allow ?? [], ask: approvals.ask ?? [], deny: approvals.deny ?? [] },
      approver: this.approvals,
      timeoutMs:
        approvals.timeoutSeconds === undefined
          ? DEFAULT_APPROVAL_TIMEOUT_MS
          : approvals.timeoutSeconds * 1000,
    };
  }

  /**
   * Works the queue of runs in this process (runs as jobs only): takes trees and sub-agent runs, up to
   * `concurrency` at once, until `close`. Started once; later calls return the same worker.
   */
  startWorker(options: { concurrency: number; name?: string; standing?: boolean }): Promise<TreeWorker> {
    const store = this.store;
    const jobs = this.#jobs;
    if (!store.jobs || !jobs)
      throw new UserError(
        'no_queue',
        'Workers need a database that several processes share: set CADRE_DATABASE_URL (or database.url) to a postgres:// URL.',
      );
    this.#worker ??= (async () => {
      const worker = new jobs.TreeWorker(
        {
          store,
          jobs: await store.jobs!(),
          runtime: (request) => this.runtime(request),
          pricing: this.config.pricing,
        },
        options,
      );
      this.metrics?.watchWorker(worker);
      await worker.start();
      return worker;
    })();
    return this.#worker;
  }

  /** Writes pending events and, when Cadre opened the store, closes it. */
  async close(): Promise<void> {
    // Jobs this process still holds go back to the queue (after a short drain) for another worker.
    const worker = await this.#worker?.catch(() => undefined);
    await worker?.stop({ drainMs: 2_000 });
    // Stopping a stdio server closes its stdin; the process exits after it has (or is killed 2-4 s on).
    await this.mcp.close();
    // The sandbox runtime's network bridges (socat processes) go with the process that started them.
    await stopSandboxRuntime();
    // The last spans go out before the process may exit; an unreachable collector is not Cadre's failure.
    await this.tracing?.shutdown().catch(() => {});
    this.metrics?.close();
    this.#detachStore();
    await this.store.runs.flush();
    if (this.#ownsStore) await this.store.close();
  }
}

/**
 * The Cadre home folder, made if missing. A home that is a file (CADRE_HOME set to the config file, a
 * typo) or that cannot be made is the person's setting to fix, named as such, not a bare EEXIST/ENOTDIR.
 */
function homeFolder(home: string): string {
  const unusable = (why: string) =>
    new UserError(
      'cadre_home_unusable',
      `Cadre's home folder ${home} ${why}. Set CADRE_HOME to a folder Cadre may write to (default ~/.cadre).`,
      { home },
    );
  const existing = statSync(home, { throwIfNoEntry: false });
  if (existing && !existing.isDirectory()) throw unusable('is a file, not a folder');
  try {
    // Cadre's home holds the database, the approval key and the config: the operator's alone.
    mkdirSync(home, { recursive: true, mode: 0o700 });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw unusable(
      code === 'ENOTDIR' || code === 'EEXIST'
        ? 'cannot be made: a part of its path is a file'
        : `cannot be made (${code ?? (error as Error).message})`,
    );
  }
  return home;
}

/** How long a question may wait for a worker (`queue.waitTimeoutSeconds`, default 600 s; 0: for ever). */
function waitTimeoutMs(seconds: number | undefined): number | undefined {
  const chosen = seconds ?? DEFAULT_WAIT_TIMEOUT_SECONDS;
  return chosen > 0 ? chosen * 1000 : undefined;
}
