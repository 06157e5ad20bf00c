import type { LanguageModel, ModelMessage } from 'ai';
import type { AgentDefinition } from './agent-definition.ts';
import { type ApprovalSettings, type Approver, NO_APPROVALS } from './approvals.ts';
import { type ChildRunner, type ChildRunRequest, InMemoryBudgetLedger } from './child-runs.ts';
import type { ResultEnvelope } from './envelope.ts';
import { SystemError, UserError } from './errors.ts';
import { EventBus, type EventListener } from './events.ts';
import { namedLimits } from './limit-names.ts';
import { DEFAULT_LIMITS, type RuntimeLimits } from './limits.ts';
import type { ModelSettings } from './model-options.ts';
import type { ResultMemory } from './result-memory.ts';
import { type PrepareAgent, runAgent } from './run-agent.ts';
import { parentOf } from './run-children.ts';
import type { ParentRun, RunFrame, TreeState } from './run-frame.ts';
import type { RunTree } from './run-tree.ts';
import { RunProjection } from './run-view.ts';
import type { ToolRegistry } from './tool-registry.ts';
import type { TreeRecord } from './tree-record.ts';
import { unknownAgentError } from './unknown-agent.ts';

export interface RuntimeOptions {
  /** Agent definitions by name, as loaded (built-in, user, project). */
  agents: ReadonlyMap<string, AgentDefinition>;
  tools: ToolRegistry;
  /** Turns a "provider:model" reference into a model (or a promise of one, for providers loaded lazily). */
  resolveModel: (ref: string) => LanguageModel | PromiseLike<LanguageModel>;
  /** The main agent's model when its definition names none. */
  mainModel?: string;
  /** Sub-agents' model when their definition names none (else the parent's). */
  subagentModel?: string;
  limits?: Partial<RuntimeLimits>;
  /** Reasoning, prompt caching, Zero Data Retention and provider options for every agent's calls. */
  modelSettings?: ModelSettings;
  /** The person's config file (`$CADRE_HOME/config.json`), named in messages about missing settings. */
  configPath?: string;
  /** Every event of every run goes here (the store, the server's live streams). */
  bus?: EventBus;
  prepareAgent?: PrepareAgent;
  /** Keeps sub-agent results so the same request later in a session reuses them (seed 000's cache). */
  resultMemory?: ResultMemory;
  /** How long a kept result may be reused, unless its agent's `reuseTtl` says otherwise; 0 turns reuse off. */
  reuseTtlMs?: number;
  /**
   * Wraps the in-process child runner (e.g. to hand child runs to a queue, or to watch them); default:
   * children run here.
   */
  childRunner?: (inProcess: ChildRunner) => ChildRunner;
  /** Approval rules and the default approver; without them calls that need approval are denied. */
  approvals?: ApprovalSettings;
  /**
   * Awaited before each request to a model (not for a step replayed from the journal). The store's
   * `secure`: what the runs published so far (tool results, their journal entries) will survive a kill
   * before any model sees it.
   */
  beforeModelRequest?: () => void | Promise<void>;
  now?: () => number;
  newId?: () => string;
}

export interface RunRequest {
  agent: string;
  task: string;
  /** A session's earlier messages, for the root run. */
  history?: ModelMessage[];
  inputs?: Record<string, unknown>;
  signal?: AbortSignal;
  sessionId?: string;
  userId?: string;
  /** Overrides the root agent's model for this run. */
  model?: string;
  /** Limits of the root run only, over its definition's (`--max-turns`, `--timeout`). */
  rootLimits?: Partial<Pick<RuntimeLimits, 'maxTurns' | 'timeoutMs'>>;
  /** Runs this sub-agent first and adds its answer to the root's instructions. */
  prefetch?: { agent: string; task?: string };
  /** Events of this run's tree only. */
  onEvent?: EventListener;
  /** Who decides this tree's approvals (the CLI's prompt or flags), instead of the runtime's approver. */
  approver?: Approver;
  /**
   * Every sub-agent runs anew: no result kept from earlier in the session is handed back (a question sent
   * again to get a different answer). What this tree's sub-agents find is still kept for later questions.
   */
  freshResults?: boolean;
  /**
   * The finished run this tree's root continues (a person's follow-up of a sub-agent run): `history` is
   * that run's conversation, and the root's own conversation is kept at its end, as a sub-agent's is.
   */
  continues?: string | undefined;
  /**
   * The tree's durable side (its journal, where an earlier attempt's runs go on, its shared budget, the
   * process running it); without one the tree lives in memory only.
   */
  record?: TreeRecord;
  /**
   * Where this tree's events are folded, by the caller as `onEvent` hands them over (the answer's own
   * projection): the outcome's tree is read from it, so the tree is folded once. Without one the runtime
   * folds the events itself.
   */
  projection?: RunProjection;
}

/** A child run handed to this process by another (a worker taking a queued run): its request and hooks. */
export interface ChildRunHooks {
  /** The child's run id (derived from its parent and the tool call, so a retried dispatch finds it). */
  runId: string;
  signal: AbortSignal;
  onEvent?: EventListener | undefined;
  approver?: Approver | undefined;
  /** The tree's record, with its shared ledger. */
  record: TreeRecord;
}

export interface RunOutcome {
  envelope: ResultEnvelope;
  tree: RunTree;
}

/** How long a sub-agent's result is reused within a session by default: an hour, as seed 000's cache. */
export const DEFAULT_REUSE_TTL_MS = 3_600_000;

/** Cadre's runtime: runs agents as trees of bounded, observable, cancellable runs. */
export class Runtime {
  readonly bus: EventBus;
  readonly options: RuntimeOptions;
  readonly limits: RuntimeLimits;

  constructor(options: RuntimeOptions) {
    this.options = options;
    this.bus = options.bus ?? new EventBus();
    this.limits = { ...DEFAULT_LIMITS, ...stripUndefined(options.limits ?? {}) };
  }

  agent(name: string): AgentDefinition {
    const definition = this.options.agents.get(name);
    if (!definition) throw unknownAgentError(name, this.options.agents.keys());
    if (!definition.enabled)
      throw new UserError('agent_disabled', `The agent "${name}" is disabled.`, { name });
    return definition;
  }

  /**
   * The model `agent` would run on as a tree's root (`model` overriding it), resolved: no model, an unknown
   * provider, a missing key or base URL is the person's error here, before anything is stored or runs.
   */
  async rootModel(agent: string, model?: string): Promise<string> {
    const modelRef = model ?? this.#modelRefFor(this.agent(agent), undefined);
    await this.options.resolveModel(modelRef);
    return modelRef;
  }

  /** Runs one agent as the root of a new tree and returns its envelope and the whole tree. */
  async run(request: RunRequest): Promise<RunOutcome> {
    const definition = this.agent(request.agent);
    const modelRef = await this.rootModel(request.agent, request.model);
    const projection = request.projection ?? new RunProjection();
    const record = request.record ?? {};
    const tree = this.#treeState({
      ...request,
      userId: request.userId ?? 'local',
      onEvent: request.projection
        ? request.onEvent
        : (event) => {
            projection.apply(event);
            request.onEvent?.(event);
          },
      record,
      maxDepth: this.limits.maxDepth,
      rootRunId: '',
    });
    const envelope = await runAgent(this.#services(record), tree, {
      definition,
      task: request.task,
      inputs: request.inputs ?? {},
      parent: undefined,
      history: request.history ?? [],
      signal: request.signal ?? new AbortController().signal,
      modelRef,
      runId: record.rootRunId,
      limits: request.rootLimits,
      ...(request.continues ? { continues: request.continues } : {}),
      prefetch: request.prefetch && {
        agent: request.prefetch.agent,
        task: request.prefetch.task ?? request.task,
      },
    });
    const root = projection.tree(envelope.runId);
    if (!root) throw new SystemError('no_run_start', `run ${envelope.runId} produced no run-start event`);
    return { envelope, tree: root };
  }

  /**
   * Runs a child another process asked for (a queued sub-agent run) as part of its tree: its parent is
   * the chain of ancestors the request carries, its budget the tree's shared ledger, its journal the
   * tree's. Resolves to its envelope; never rejects for what happens inside the run.
   */
  async runChild(request: ChildRunRequest, hooks: ChildRunHooks): Promise<ResultEnvelope> {
    const definition = this.agent(request.agent);
    const tree = this.#treeState({
      userId: request.userId,
      sessionId: request.sessionId,
      freshResults: request.freshResults,
      approver: hooks.approver,
      onEvent: hooks.onEvent,
      record: hooks.record,
      maxDepth: request.maxDepth,
      rootRunId: request.rootRunId,
    });
    return runAgent(this.#services(hooks.record), tree, {
      definition,
      task: request.task,
      inputs: request.inputs,
      parent: parentOf(request),
      history: request.context,
      ...(request.fork ? { fork: request.fork } : {}),
      signal: hooks.signal,
      runId: hooks.runId,
      notAfter: request.deadline,
      parentToolCallId: request.parentToolCallId,
      ...(request.continues ? { continues: request.continues } : {}),
      ...(request.background ? { background: true as const } : {}),
    });
  }

  #treeState(request: {
    userId: string;
    sessionId?: string | undefined;
    freshResults?: boolean | undefined;
    approver?: Approver | undefined;
    onEvent?: EventListener | undefined;
    record: TreeRecord;
    maxDepth: number;
    rootRunId: string;
  }): TreeState {
    const treeBus = new EventBus();
    treeBus.subscribe((event) => {
      this.bus.publish(event);
      request.onEvent?.(event);
    });
    let counter = 0;
    const { resultMemory, approvals } = this.options;
    const frames = new Map<string, RunFrame>();
    request.record.steer?.({
      stopRun: (runId, reason) => {
        const frame = frames.get(runId);
        if (!frame) return false;
        frame.stopAlone(reason);
        return true;
      },
      sendMessage: (runId, message) => {
        const frame = frames.get(runId);
        if (!frame) return false;
        frame.inbox.send(message);
        return true;
      },
    });
    return {
      bus: treeBus,
      limits: this.limits,
      ledger: request.record.ledger ?? new InMemoryBudgetLedger(),
      frames,
      background: { running: 0 },
      maxDepth: request.maxDepth,
      userId: request.userId,
      sessionId: request.sessionId,
      reuse: resultMemory && {
        memory: resultMemory,
        ttlMs: this.options.reuseTtlMs ?? DEFAULT_REUSE_TTL_MS,
        ...(request.freshResults ? { recall: false as const } : {}),
      },
      ...(approvals || request.approver
        ? {
            approvals: {
              ...(approvals ?? NO_APPROVALS),
              approver: request.approver ?? approvals?.approver,
            },
          }
        : {}),
      rootRunId: request.rootRunId,
      record: request.record,
      now: this.options.now ?? Date.now,
      newId:
        this.options.newId ??
        (() => `run_${Date.now().toString(36)}${(counter++).toString(36)}${randomSuffix()}`),
    };
  }

  /** The loop's services; the tree's record may run its children elsewhere (as jobs) instead of the runtime's runner. */
  #services(record: TreeRecord) {
    const childRunner: ((inProcess: ChildRunner) => ChildRunner) | undefined = record.childRunner
      ? (inProcess) => record.childRunner!(inProcess)
      : this.options.childRunner;
    return {
      agents: this.options.agents,
      tools: this.options.tools,
      resolveModel: this.options.resolveModel,
      modelRefFor: (agent: AgentDefinition, parent: ParentRun | undefined) =>
        this.#modelRefFor(agent, parent),
      limitsFor: (agent: AgentDefinition) => this.#limitsFor(agent),
      ...(this.options.prepareAgent ? { prepareAgent: this.options.prepareAgent } : {}),
      ...(childRunner ? { childRunner } : {}),
      ...(this.options.beforeModelRequest ? { beforeModelRequest: this.options.beforeModelRequest } : {}),
      ...(this.options.modelSettings ? { modelSettings: this.options.modelSettings } : {}),
    };
  }

  #modelRefFor(definition: AgentDefinition, parent: ParentRun | undefined): string {
    const declared = definition.model;
    if (declared && declared !== 'inherit') return declared;
    if (!parent) {
      if (this.options.mainModel) return this.options.mainModel;
      throw noModelError(this.options.configPath);
    }
    if (declared === 'inherit') return parent.modelRef;
    return this.options.subagentModel ?? parent.modelRef;
  }

  #limitsFor(definition: AgentDefinition): RuntimeLimits {
    return { ...this.limits, ...namedLimits(definition, 'definition') };
  }
}

/** The error for a missing model, saying exactly how to set one. */
export function noModelError(configPath = '~/.cadre/config.json'): UserError {
  return new UserError(
    'no_model',
    [
      'No model is configured. Set one as "provider:model", for example:',
      '  export CADRE_MODEL=openai:gpt-5-mini          (with OPENAI_API_KEY)',
      '  export CADRE_MODEL=anthropic:claude-sonnet-4-5 (with ANTHROPIC_API_KEY)',
      '  export CADRE_MODEL=ollama:qwen3               (a local Ollama)',
      '  export CADRE_MODEL=compatible:my-model        (with CADRE_COMPATIBLE_BASE_URL)',
      `or pass --model openai:gpt-5-mini, or set "model" in ${configPath}.`,
    ].join('\n'),
  );
}

function randomSuffix(): string {
  return Math.random().toString(36).slice(2, 8);
}

function stripUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, item]) => item !== undefined)) as Partial<T>;
}
