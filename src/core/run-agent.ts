import type { LanguageModelV4 } from '@ai-sdk/provider';
import { isStepCount, type LanguageModel, type ModelMessage } from 'ai';
import { nextDelivery, stopBackground } from './background.ts';
import { deadlines, runSignals } from './deadline-clock.ts';
import type { ResultEnvelope, Source } from './envelope.ts';
import { describeError, RunStopped } from './errors.ts';
import { cacheIdentity, forkBrief, forkTooLarge, forkTools } from './fork-context.ts';
import { guardModel } from './guarded-model.ts';
import { childJournalKey } from './journal.ts';
import { FINAL_ANSWER_PROMPT, type RuntimeLimits } from './limits.ts';
import type { LoopServices, RunSpec } from './loop-services.ts';
import { isModelCallTimeout } from './model-call-timeout.ts';
import { describeModelError, isTransientStreamFailure } from './model-errors.ts';
import { callSettingsFor } from './model-options.ts';
import { repairStructuredOutput } from './output-repair.ts';
import { bindTools, prefetch } from './run-children.ts';
import { closeRun, finishInterrupted, interruption } from './run-close.ts';
import { budgetSpent, countUsage, emit, goLive, type RunFrame, type TreeState } from './run-frame.ts';
import { RunInbox } from './run-inbox.ts';
import { Semaphore } from './semaphore.ts';
import { citedSources } from './sources.ts';
import type { RunStatus } from './status.ts';
import { budgetExhausted, stopReasonAfter, stopWhenOf, turnLimitReached } from './stop-conditions.ts';
import { streamTurns } from './stream-turns.ts';
import { validateStructuredOutput } from './structured-output.ts';
import { declaredOnly } from './tool-bindings.ts';
import { EventNumbering } from './tree-record.ts';
import { externalKnowledgeSection } from './untrusted.ts';
import { type Usage, zeroUsage } from './usage.ts';
import { gate } from './usage-meter.ts';
import { Vault } from './vault.ts';

export type { LoopServices, PrepareAgent, RunSpec } from './loop-services.ts';

/**
 * Runs one agent on one task and returns its result envelope. It never throws for things that happen
 * during the run (model errors, tool errors, limits, cancellation): those become the envelope's status.
 *
 * 1. Resolve the model and open the run (`run-start`).
 * 2. Refuse to call a model if the tree's token budget is already spent.
 * 3. Bind exactly the allowed tools; agent tools only where depth allows.
 * 4. Prefetch: run a configured sub-agent first and add its result as "External knowledge".
 * 5. Stream the tool loop, translating SDK parts to events; stop on maxTurns or budget.
 * 6. Out of turns with tool calls pending: one last call that may call no tool, for a final answer.
 * 7. Validate structured output (one repair call if it fails), verify cited sources, wait for children, close the run (`run-finish`).
 */
export async function runAgent(
  services: LoopServices,
  tree: TreeState,
  spec: RunSpec,
): Promise<ResultEnvelope> {
  const limits = { ...services.limitsFor(spec.definition), ...spec.limits };
  const now = tree.now();
  // A run going on from an earlier attempt (a job retried, or set aside and put back) keeps its deadline.
  const resumed = spec.runId ? tree.record.resumePoint?.(spec.runId) : undefined;
  const startedAt = resumed?.startedAt || now;
  const ownDeadline = startedAt + limits.timeoutMs;
  // A person may stop this run alone (TreeSteering.stopRun): its own signal, beside its parent's.
  const alone = new AbortController();
  const signals = runSignals(AbortSignal.any([spec.signal, alone.signal]), Math.max(0, ownDeadline - now));
  // A parent elsewhere stops its child at its own deadline, as a parent in process would by its signal.
  const parentEnd =
    spec.notAfter === undefined ? undefined : deadlineAbort(signals.signal, spec.notAfter - now);
  const deadline = Math.min(ownDeadline, spec.notAfter ?? Number.POSITIVE_INFINITY);
  try {
    return await runWithin(
      services,
      tree,
      spec,
      limits,
      parentEnd ? { ...signals, signal: parentEnd.signal } : signals,
      deadline,
      (reason) => {
        if (!alone.signal.aborted) alone.abort(new RunStopped(reason));
      },
    );
  } finally {
    parentEnd?.clear();
    signals.release();
  }
}

/**
 * `signal`, aborted besides after `ms` as a cancellation ("its parent ran out of time"), on the shared
 * deadline clock (long limits clamp there); at once when the parent's deadline has already passed.
 */
function deadlineAbort(signal: AbortSignal, ms: number): { signal: AbortSignal; clear(): void } {
  const controller = new AbortController();
  const stop = () => controller.abort(new Error('its parent ran out of time'));
  const forward = () => controller.abort(signal.reason);
  if (signal.aborted) forward();
  else if (ms <= 0) stop();
  else signal.addEventListener('abort', forward, { once: true });
  const deadline = controller.signal.aborted ? undefined : deadlines.after(ms, stop);
  return {
    signal: controller.signal,
    clear: () => {
      deadline?.cancel();
      signal.removeEventListener('abort', forward);
    },
  };
}

async function runWithin(
  services: LoopServices,
  tree: TreeState,
  spec: RunSpec,
  limits: RuntimeLimits,
  { signal, timeoutSignal }: { signal: AbortSignal; timeoutSignal: AbortSignal },
  deadline: number,
  stopAlone: (reason: string) => void,
): Promise<ResultEnvelope> {
  const { definition } = spec;
  const modelRef = spec.modelRef ?? services.modelRefFor(definition, spec.parent);

  let initialMessages: ModelMessage[] = [...spec.history, { role: 'user', content: taskMessage(spec) }];
  let responseMessages: ModelMessage[] = [];
  const id = spec.runId ?? tree.newId();
  const frame: RunFrame = {
    id,
    task: spec.task,
    parent: spec.parent,
    depth: spec.parent ? spec.parent.depth + 1 : 0,
    definition,
    modelRef,
    limits,
    tree,
    inputs: spec.inputs,
    signal,
    timeoutSignal,
    deadline,
    vault: new Vault(),
    usage: zeroUsage(),
    childUsage: zeroUsage(),
    children: new Set(),
    siblings: new Semaphore(limits.maxConcurrency),
    delegations: new Map(),
    refusedCalls: new Map(),
    readUntrusted: false,
    stepDelegations: 0,
    stepUsageKnown: Promise.resolve(),
    lastCallEstimated: false,
    journalKey: spec.parent ? childJournalKey(spec.parent.journalKey, spec.parentToolCallId ?? 'child') : 'r',
    lastCall: undefined,
    unfinishedStep: undefined,
    conversation: () => [...initialMessages, ...responseMessages],
    seenUrls: new Set(),
    directTools: new Set(),
    numbering: new EventNumbering(tree.record.resumePoint?.(id)),
    stopAlone,
    completedCalls: [],
    inbox: new RunInbox(),
    finishedChildren: new Map(),
    ...(spec.continues ? { continues: spec.continues } : {}),
    background: new Map(),
    backgroundStop: new AbortController(),
  };
  tree.frames.set(frame.id, frame);

  // 1.
  if (!spec.parent) {
    tree.maxDepth = limits.maxDepth;
    tree.rootRunId = frame.id;
  }
  frame.maxDepth = depthBound(frame, tree.maxDepth);
  emit(frame, {
    type: 'run-start',
    task: spec.task,
    model: modelRef,
    userId: tree.userId,
    ...(tree.sessionId && !spec.parent ? { sessionId: tree.sessionId } : {}),
    ...(spec.parentToolCallId ? { parentToolCallId: spec.parentToolCallId } : {}),
    ...(tree.record.worker ? { worker: tree.record.worker } : {}),
    ...(spec.continues ? { continues: spec.continues } : {}),
    ...(spec.fork ? { forked: true } : {}),
    ...(spec.background ? { background: true } : {}),
  });
  const finish = (status: RunStatus, summary: string, extra: { data?: unknown; sources?: Source[] } = {}) =>
    closeRun(frame, status, summary, extra);

  // 2.
  if (budgetSpent(frame)) {
    return finish(
      'budget',
      `Not started: the token budget of ${limits.treeBudget} for this request is spent.`,
    );
  }

  let model: LanguageModel;
  let instructions = definition.instructions;
  let stepGate = gate();
  const budgeted = limits.runBudget !== undefined || limits.treeBudget !== undefined;
  try {
    const provider = (await services.resolveModel(modelRef)) as LanguageModelV4;
    // Every call's usage is read from the model's own stream (estimated when the provider sends none).
    // With a budget it is counted as soon as each call ends, so a delegation in the same step already sees
    // it; without one, counting at the end of each step (in streamTurns) is enough.
    model = guardModel(provider, {
      bounds: limits,
      onRefused: (toolCallId, reason) => frame.refusedCalls.set(toolCallId, reason),
      timeoutMs: limits.modelCallTimeoutMs,
      ...(tree.record.journal
        ? { journal: { journal: tree.record.journal, runKey: frame.journalKey, onLive: () => goLive(frame) } }
        : {}),
      ...(services.beforeModelRequest ? { beforeRequest: services.beforeModelRequest } : {}),
      usage: {
        onEstimated: () => {
          frame.lastCallEstimated = true;
        },
        // When the model itself was busy, for traces: a step's end also waits for its tools.
        onCallStart: () => {
          frame.lastCall = { startedAt: tree.now() };
        },
        onFinish: () => {
          if (frame.lastCall) frame.lastCall.endedAt = tree.now();
        },
        onUsage: (usage) => {
          frame.unfinishedStep = usage;
          if (!budgeted) return;
          countUsage(frame, usage);
          stepGate.open();
        },
        ...(budgeted ? { onCallEnd: () => stepGate.open() } : {}),
      },
    });
    const prepared = await services.prepareAgent?.({
      agent: definition.name,
      inputs: spec.inputs,
      userId: tree.userId,
      signal,
    });
    if (prepared?.instructions) instructions = `${instructions}\n\n${prepared.instructions}`;
    // A forked run sends its parent's instructions; its own go in the brief after the parent's messages.
    if (spec.fork) {
      initialMessages = [...spec.history, forkBrief(definition.name, instructions, taskMessage(spec))];
      instructions = spec.fork.instructions;
    }
  } catch (error) {
    emit(frame, { type: 'run-error', status: 'error', message: describeError(error) });
    return finish('error', describeError(error));
  }
  const tooLarge = spec.fork && forkTooLarge(frame, initialMessages, spec.fork);
  if (tooLarge) {
    emit(frame, { type: 'run-error', status: 'budget', message: tooLarge });
    return finish('budget', tooLarge);
  }

  // 3.
  const own = bindTools(services, tree, frame, runAgent);
  const tools = spec.fork ? forkTools(spec.fork, own, definition.name) : own;

  // 4.
  if (spec.prefetch) {
    const knowledge = await prefetch(services, tree, frame, spec.prefetch, runAgent);
    if (knowledge) {
      const section = externalKnowledgeSection(knowledge.agent, knowledge.turns, knowledge.summary);
      instructions = `${instructions}\n\n${section}`;
    }
  }

  // 5.
  frame.sent = { instructions, tools };
  const call = callSettingsFor(
    modelRef,
    cacheIdentity(definition, modelRef, spec.fork),
    services.modelSettings,
  );
  const stops = [turnLimitReached(limits.maxTurns), budgetExhausted(frame)];
  /**
   * The tool loop from `messages`, after `stepsDone` steps whose response messages were `before`
   * (`answeredBefore`: a new turn after the run's answer).
   */
  const loop = (
    messages: ModelMessage[],
    before: ModelMessage[],
    stepsDone: number,
    answeredBefore = false,
  ) =>
    streamTurns(frame, {
      answeredBefore,
      model,
      instructions,
      messages,
      tools,
      temperature: definition.temperature,
      maxOutputTokens: limits.maxOutputTokens,
      metered: budgeted,
      call,
      ...(spec.fork ? { parentMessages: spec.history.length } : {}),
      stopWhen: stopWhenOf([turnLimitReached(limits.maxTurns - stepsDone), budgetExhausted(frame)]),
      ...(stepsDone ? { stepOffset: stepsDone } : {}),
      prepareStep: ({ stepNumber, responseMessages: soFar }) => {
        responseMessages = [...before, ...soFar];
        frame.stepDelegations = 0;
        if (budgeted) {
          stepGate = gate();
          frame.stepUsageKnown = stepGate.promise;
        }
        const first = definition.firstTool;
        if (stepsDone + stepNumber === 0 && first && Object.hasOwn(tools, first)) {
          return { toolChoice: { type: 'tool' as const, toolName: first } };
        }
        return undefined;
      },
    });
  let turn = await loop(initialMessages, [], 0);
  // A transient failure in the middle of an answer (the provider overloaded, a connection reset) is tried
  // once more from that step's start, rather than keeping the cut answer ("found: 39" of 391).
  if (turn.error !== undefined && !interruption(frame) && isTransientStreamFailure(turn.error)) {
    const before = responseMessages;
    const again = await loop([...initialMessages, ...before], before, turn.steps);
    turn = {
      ...again,
      steps: turn.steps + again.steps,
      responseMessages: [...before, ...again.responseMessages],
    };
  }
  // Answered with sub-agents still running in the background: each envelope, as it comes, starts a new
  // turn the agent answers (after what it said already), until none is left (see background.ts).
  while (!turn.error && !turn.endedWithToolCalls && !interruption(frame)) {
    if (!(await nextDelivery(frame, turn.steps))) break;
    const conversation = turn.conversation ?? [...initialMessages, ...turn.responseMessages];
    const before = conversation.slice(initialMessages.length);
    const again = await loop(conversation, before, turn.steps, turn.answer !== '');
    turn = {
      ...again,
      steps: turn.steps + again.steps,
      responseMessages: [...before, ...again.responseMessages],
      // A background result's turn goes on after the answer; a person's message is answered anew.
      answer: again.continuesAnswer
        ? [turn.answer, again.answer].filter(Boolean).join('\n\n')
        : again.answer || turn.answer,
    };
  }
  // The whole conversation so far (the last step's answer too): what a parent keeps to continue it with.
  responseMessages = turn.responseMessages;
  let answer = turn.answer;
  let last = turn;
  const stopReason = stopReasonAfter(stops, turn.steps);

  const interrupted = interruption(frame);
  if (interrupted) return finishInterrupted(frame, interrupted, answer);
  if (turn.error !== undefined) {
    const message = describeModelError(turn.error);
    const status = isModelCallTimeout(turn.error) ? 'timeout' : 'error';
    emit(frame, { type: 'run-error', status, message });
    stopBackground(frame, status);
    return finish(status, answer ? `${answer}\n\n[stopped by an error: ${message}]` : message);
  }
  if (turn.endedWithToolCalls && stopReason === 'budget') {
    stopBackground(frame, 'budget');
    return finish('budget', answer || 'The token budget ran out before the agent reached an answer.');
  }

  // 6.
  let status: RunStatus = 'ok';
  let transcript: ModelMessage[] = [...initialMessages, ...turn.responseMessages];
  let steps = turn.steps;
  if (turn.endedWithToolCalls && stopReason === 'max_turns') {
    status = 'max_turns';
    // Its answer now is its last step: no turn is left for a background result.
    stopBackground(frame, status);
    const final = await streamTurns(frame, {
      model,
      instructions,
      messages: [
        ...initialMessages,
        ...turn.responseMessages,
        { role: 'user', content: FINAL_ANSWER_PROMPT },
      ],
      tools: declaredOnly(tools),
      toolChoice: 'none',
      temperature: definition.temperature,
      maxOutputTokens: limits.maxOutputTokens,
      stopWhen: [isStepCount(1)],
      stepOffset: turn.steps,
      metered: budgeted,
      call,
    });
    const stopped = interruption(frame);
    if (stopped) return finishInterrupted(frame, stopped, final.answer || answer);
    transcript = [...transcript, { role: 'user', content: FINAL_ANSWER_PROMPT }, ...final.responseMessages];
    responseMessages = transcript.slice(initialMessages.length);
    steps += final.steps;
    last = final;
    if (final.error !== undefined) {
      const message = describeModelError(final.error);
      emit(frame, { type: 'run-error', status: 'max_turns', message });
    }
    answer = final.answer || answer || `Stopped after ${limits.maxTurns} turns without a final answer.`;
  }

  // 7.
  if (!answer.trim()) {
    stopBackground(frame, 'error');
    return finish('error', noAnswer(last, limits.maxOutputTokens + call.reasoningRoom));
  }
  const extra: { data?: unknown; sources?: Source[] } = {};
  if (definition.output) {
    let structured = validateStructuredOutput(answer, definition.output);
    if (!structured.ok && !budgetSpent(frame)) {
      const repair = await repairStructuredOutput(
        frame,
        {
          model,
          instructions,
          tools: declaredOnly(tools),
          temperature: definition.temperature,
          maxOutputTokens: limits.maxOutputTokens,
          metered: budgeted,
          call,
        },
        transcript,
        structured.error,
        steps,
      );
      const stopped = interruption(frame);
      if (stopped) return finishInterrupted(frame, stopped, answer);
      if (repair.error === undefined && repair.answer) {
        const repaired = validateStructuredOutput(repair.answer, definition.output);
        if (repaired.ok) answer = repair.answer;
        structured = repaired;
      }
    }
    if (structured.ok) {
      extra.data = structured.data;
      answer = structuredSummary(structured.data) ?? answer;
    } else if (status === 'ok') {
      status = 'partial';
      answer = `${answer}\n\n[structured output invalid: ${structured.error}]`;
    }
  }
  // Every answer's links are checked, the main agent's too: verified when a tool of this run returned the
  // URL, or a sub-agent under it vouched for it as verified.
  const sources = citedSources(answer, frame.seenUrls);
  if (sources.length) extra.sources = sources;
  return finish(status, answer, extra);
}

/**
 * Why a run ended without an answer: said plainly when the model's output limit cut it, with what reasoning
 * took of it (a reasoning model can spend the whole limit thinking).
 */
function noAnswer(
  last: { finishReason?: string | undefined; lastUsage?: Usage | undefined },
  limit: number,
): string {
  if (last.finishReason !== 'length') return 'The agent finished without an answer.';
  const reasoning = last.lastUsage?.reasoningTokens;
  const spent = reasoning
    ? `; reasoning took ${reasoning.toLocaleString('en')} of its ${(last.lastUsage?.outputTokens ?? 0).toLocaleString('en')} output tokens`
    : '';
  return `The agent reached its output limit of ${limit.toLocaleString('en')} tokens (limits.maxOutputTokens, plus room for reasoning) before it answered${spent}. Raise maxOutputTokens or lower the reasoning effort.`;
}

/** A structured result's own `summary` field, when it has one: the envelope's summary for people. */
function structuredSummary(data: unknown): string | undefined {
  const summary = (data as { summary?: unknown } | null)?.summary;
  return typeof summary === 'string' && summary.trim() ? summary.trim() : undefined;
}

function taskMessage(spec: RunSpec): string {
  const inputs = Object.entries(spec.inputs);
  if (!inputs.length) return spec.task;
  const lines = inputs.map(([key, value]) => `- ${key}: ${JSON.stringify(value)}`);
  return `${spec.task}\n\nInputs:\n${lines.join('\n')}`;
}

/**
 * How deep `frame`'s sub-agents may nest: the root's limit is the tree's; below it, a definition's own
 * `maxDepth` counts from the run's depth and can only narrow what its parent allows, never raise it.
 */
function depthBound(frame: RunFrame, treeMaxDepth: number): number {
  if (!frame.parent) return treeMaxDepth;
  const inherited = frame.parent.maxDepth ?? treeMaxDepth;
  const own = frame.definition.maxDepth;
  return own === undefined ? inherited : Math.min(inherited, frame.depth + own);
}
