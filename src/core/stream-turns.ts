import {
  experimental_createSteering as createSteering,
  InvalidToolInputError,
  type LanguageModel,
  type ModelMessage,
  NoSuchToolError,
  type StopCondition,
  experimental_streamTextLowMemory as streamTextOnce,
  type ToolSet,
} from 'ai';
import { deliveredKey } from './background.ts';
import { describeError } from './errors.ts';
import type { StepFinishEvent } from './events.ts';
import type { CadreCallOptions } from './model-call-options.ts';
import { type CallSettings, cachedInstructions, withConversationBreakpoint } from './model-options.ts';
import { countUsage, emit, emitRefusedCall, type RunFrame } from './run-frame.ts';
import { asUserMessage } from './run-inbox.ts';
import type { RunMessage } from './tree-record.ts';
import { type Usage, usageFromSdk } from './usage.ts';
import { needsDeclaredCalls, withDeclaredCallsOnly } from './valid-history.ts';

/**
 * One AI SDK tool loop for a run, read once: text and reasoning deltas, refused calls and step usage become
 * the run's events; the final step's text and the response messages come back for the caller to judge.
 */
export interface TurnOptions {
  model: LanguageModel;
  instructions: string;
  messages: ModelMessage[];
  tools: ToolSet;
  activeTools?: string[];
  toolChoice?: 'none';
  temperature: number | undefined;
  /** Tokens one model call may write. */
  maxOutputTokens: number;
  stopWhen: StopCondition<ToolSet>[];
  prepareStep?: (options: {
    stepNumber: number;
    responseMessages: ModelMessage[];
  }) => { toolChoice: { type: 'tool'; toolName: string } } | undefined;
  stepOffset?: number;
  /** True when the model reports usage itself as each call ends (see usageMapper in usage-meter.ts). */
  metered: boolean;
  /** Reasoning, provider options and cache breakpoints for this agent on its provider. */
  call?: CallSettings | undefined;
  /** A forked run: how many of `messages` are its parent's (a cache breakpoint stays on the last of them). */
  parentMessages?: number;
  /** The run had answered before this loop (a new turn after its answer, see run-agent.ts). */
  answeredBefore?: boolean;
}

export interface TurnResult {
  answer: string;
  steps: number;
  endedWithToolCalls: boolean;
  responseMessages: ModelMessage[];
  error?: unknown;
  /** How the last step ended, and its usage: a step cut by the output limit says so. */
  finishReason?: StepFinishEvent['finishReason'];
  lastUsage?: Usage;
  /**
   * Everything the loop's model saw and said, in order: its messages with the ones that joined it (a
   * person's, a background run's envelope), which the SDK's response messages leave out.
   */
  conversation?: ModelMessage[];
  /**
   * The loop began with a background run's result after the run had answered: its answer goes on after
   * the earlier one rather than replacing it (a person's message makes the run answer again instead).
   */
  continuesAnswer?: boolean;
}

/** One streamText loop, its parts translated to events and its usage added to the run and the tree. */
export async function streamTurns(frame: RunFrame, options: TurnOptions): Promise<TurnResult> {
  const result: TurnResult = { answer: '', steps: 0, endedWithToolCalls: false, responseMessages: [] };
  let stepText = '';
  let lastText = '';
  let ended: { responseMessages: ModelMessage[]; finalText: string } | undefined;
  // A person's messages to the run join at the loop's next step boundary (see run-inbox.ts).
  const steering = createSteering();
  frame.inbox.attach(steering);
  const sent: SentMessages = {};
  // The single-consumer engine: Cadre reads each stream once, so the SDK need not keep a replay buffer.
  const stream = streamTextOnce({
    experimental_steering: steering,
    model: options.model,
    instructions: !options.instructions
      ? undefined
      : options.call?.cacheBreakpoints
        ? cachedInstructions(options.instructions)
        : options.instructions,
    ...(options.call?.reasoning ? { reasoning: options.call.reasoning } : {}),
    // Cadre's own entry (see model-call-options.ts): the run's deadline, and where a retry is told.
    providerOptions: {
      ...options.call?.providerOptions,
      cadre: {
        deadline: frame.deadline,
        onRetry: (notice) => emit(frame, { type: 'model-retry', ...notice }),
      } satisfies CadreCallOptions as never,
    },
    messages: options.messages,
    tools: options.tools,
    ...(options.activeTools ? { activeTools: options.activeTools as never[] } : {}),
    ...(options.toolChoice ? { toolChoice: options.toolChoice } : {}),
    temperature: options.temperature,
    maxOutputTokens: options.maxOutputTokens + (options.call?.reasoningRoom ?? 0),
    stopWhen: options.stopWhen,
    prepareStep: validSteps(frame, options, sent) as never,
    abortSignal: frame.signal,
    maxRetries: 0,
    onError: () => {},
    onEnd: (event) => {
      ended = { responseMessages: event.responseMessages as ModelMessage[], finalText: event.finalStep.text };
    },
  });
  try {
    for await (const part of stream.stream) {
      switch (part.type) {
        case 'start-step':
          stepText = '';
          break;
        case 'text-delta':
          stepText += part.text;
          emit(frame, { type: 'text-delta', delta: part.text });
          break;
        case 'reasoning-delta':
          emit(frame, { type: 'reasoning-delta', delta: part.text });
          break;
        case 'tool-call':
          if (part.invalid) refuseCall(frame, part.toolCallId, part.toolName, part.input, part.error);
          break;
        case 'finish-step': {
          closeStep(
            frame,
            options,
            result,
            usageFromSdk(part.usage, frame.lastCallEstimated),
            part.finishReason,
          );
          if (stepText.trim()) lastText = stepText;
          break;
        }
        case 'error':
          result.error = part.error;
          break;
        default:
          break;
      }
    }
    result.responseMessages = ended?.responseMessages ?? [];
    if (sent.continuesAnswer) result.continuesAnswer = true;
    if (sent.last)
      result.conversation = [
        ...sent.last.messages,
        ...result.responseMessages.slice(sent.last.responseCount),
      ];
    // Stopped in a step (its tools still running): what that step had written is the text so far.
    const cut = frame.signal.aborted && stepText.trim() ? stepText : lastText;
    result.answer = withAnswered(sent, (ended?.finalText.trim() ? ended.finalText : cut).trim());
  } catch (error) {
    if (!frame.signal.aborted) result.error ??= error;
    result.answer = withAnswered(sent, lastText.trim() || stepText.trim());
  }
  frame.inbox.detach();
  if (frame.signal.aborted) closeCutStep(frame, options, result);
  return result;
}

/**
 * The latest step's messages (those that joined it included), and how many response messages came before
 * it; and the answers the loop gave before a background run's result kept it going (see `validSteps`).
 */
interface SentMessages {
  last?: { messages: ModelMessage[]; responseCount: number };
  answered?: string[];
  /** The loop's first step began with a background result after the run had answered (a new turn). */
  continuesAnswer?: boolean;
}

/** The loop's answer: what it answered before a background result kept it going, then its last answer. */
function withAnswered(sent: SentMessages, answer: string): string {
  return [...(sent.answered ?? []), answer].filter(Boolean).join('\n\n');
}

/**
 * The run's own `prepareStep`, and before every step a history its provider accepts: on a provider that
 * refuses calls to undeclared tools in the history, such calls are rewritten as text (see
 * withDeclaredCallsOnly); the rewritten messages carry forward to later steps.
 */
function validSteps(frame: RunFrame, options: TurnOptions, sent: SentMessages) {
  const declared = new Set(Object.keys(options.tools));
  const rewrite = needsDeclaredCalls(frame.modelRef);
  const breakpoints = options.call?.cacheBreakpoints === true;
  return async (step: {
    stepNumber: number;
    messages: ModelMessage[];
    responseMessages: ModelMessage[];
    experimental_steeringMessages?: ModelMessage[];
    steps?: Array<{ finishReason: string; text: string }>;
  }) => {
    const own = options.prepareStep?.(step);
    // What the run had answered just before this step (in this loop, or before it, for a new turn).
    const before = step.steps?.at(-1);
    const answered =
      before === undefined
        ? options.answeredBefore === true
        : before.finishReason === 'stop' && before.text.trim() !== '';
    const joined = await joinMessages(frame, (options.stepOffset ?? 0) + step.stepNumber, step, answered);
    let { messages } = joined;
    sent.last = { messages, responseCount: step.responseMessages.length };
    // A background run's result that came as the model answered keeps the loop going: what it had
    // answered (the person has seen it) stays part of the answer.
    if (joined.background && answered) {
      if (before) sent.answered = [...(sent.answered ?? []), before.text.trim()];
      else sent.continuesAnswer = true;
    }
    if (rewrite) messages = withDeclaredCallsOnly(messages, declared);
    if (breakpoints) messages = withConversationBreakpoint(messages, options.parentMessages);
    return messages === step.messages ? own : { ...own, messages };
  };
}

/**
 * A person's messages before model step `index` of the run (its whole count): those an earlier attempt
 * recorded for this step are added again (a resume replays each once, where it joined); else those the SDK's
 * steering added now are recorded in the journal before the model request goes out. Each is shown as a
 * `run-message` event. Returns the step's messages (with the replayed ones added: they carry forward), and
 * whether a background run's result is among them.
 */
async function joinMessages(
  frame: RunFrame,
  index: number,
  step: { messages: ModelMessage[]; experimental_steeringMessages?: ModelMessage[] },
  answered: boolean,
): Promise<{ messages: ModelMessage[]; background: boolean }> {
  const journal = frame.tree.record.journal;
  const recorded = journal?.get(frame.journalKey, 'message', String(index)) as
    | { messages: RunMessage[] }
    | undefined;
  let messages = step.messages;
  let joined: RunMessage[];
  if (recorded) {
    for (const message of recorded.messages) frame.inbox.replayed(message.id);
    joined = recorded.messages;
    messages = [...messages, ...joined.map((message) => asUserMessage(message))];
  } else {
    joined = frame.inbox.joined(step.experimental_steeringMessages?.length ?? 0);
    if (journal && joined.length)
      await journal.put(frame.journalKey, 'message', String(index), { messages: joined }, 'now');
    // A background run's envelope has reached its parent: a resume does not start that run again.
    for (const { background } of joined)
      if (journal && background)
        await journal.put(frame.journalKey, 'message', deliveredKey(background.toolCallId), {}, 'now');
  }
  const background = joined.some((message) => message.background);
  // After an answer, a background result starts a new paragraph of it (before the messages' events, the
  // same in a replay, whichever loop replays it).
  if (background && answered) emit(frame, { type: 'text-delta', delta: '\n\n' });
  for (const message of joined) {
    if (message.background) frame.background.delete(message.id);
    emit(frame, {
      type: 'run-message',
      messageId: message.id,
      text: message.text,
      step: index,
      ...(message.background ? { background: message.background } : {}),
    });
  }
  return { messages, background };
}

/**
 * A stop that came while a step's tools were running (a delegation, say) ends the loop before the step
 * does; its model call had answered and was paid for, so it is counted and its step closed here, as a step
 * that called tools: the run's turns and usage say what was spent, also after a Stop.
 */
function closeCutStep(frame: RunFrame, options: TurnOptions, result: TurnResult): void {
  if (frame.unfinishedStep) closeStep(frame, options, result, frame.unfinishedStep, 'tool-calls');
}

/** Ends one step: its model call's usage is counted (unless metered as it came) and `step-finish` emitted. */
function closeStep(
  frame: RunFrame,
  options: TurnOptions,
  result: TurnResult,
  usage: Usage,
  finishReason: StepFinishEvent['finishReason'],
): void {
  frame.lastCallEstimated = false;
  const call = frame.lastCall;
  frame.lastCall = undefined;
  frame.unfinishedStep = undefined;
  if (!options.metered) countUsage(frame, usage);
  emit(frame, {
    type: 'step-finish',
    step: (options.stepOffset ?? 0) + result.steps,
    finishReason,
    usage,
    ...(call ? { modelStartedAt: call.startedAt, modelEndedAt: call.endedAt ?? frame.tree.now() } : {}),
  });
  result.steps++;
  result.endedWithToolCalls = finishReason === 'tool-calls';
  result.finishReason = finishReason;
  result.lastUsage = usage;
}

/** A call the model made to a tool it was not given, or with arguments that do not parse: never run. */
function refuseCall(frame: RunFrame, toolCallId: string, name: string, input: unknown, error: unknown): void {
  const reason =
    frame.refusedCalls.get(toolCallId) ??
    (NoSuchToolError.isInstance(error)
      ? `"${name}" is not a tool this agent may use`
      : InvalidToolInputError.isInstance(error)
        ? `invalid arguments for ${name}: ${describeError(error.cause ?? error)}`
        : describeError(error));
  emitRefusedCall(frame, { toolCallId, name, input }, reason);
}
