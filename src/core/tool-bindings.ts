import { type Tool, tool } from 'ai';
import { gateToolCall } from './approvals.ts';
import { describeError, ModelBehaviorError, RunHandedOff, SystemError } from './errors.ts';
import { interruptedStart, startRecorder } from './interrupted-calls.ts';
import type { JournaledToolResult } from './journal.ts';
import { outputJson, outputReturned } from './output-json.ts';
import { emit, emitRefusedCall, goLive, type RunFrame } from './run-frame.ts';
import { sdkSchema } from './schema-cache.ts';
import { collectOutputUrls } from './sources.ts';
import { storedOutput } from './stored-output.ts';
import type { CadreTool, ToolContext } from './tool.ts';
import type { ToolRegistry } from './tool-registry.ts';
import { isUntrustedModelOutput } from './untrusted.ts';

/**
 * Runs one tool call on behalf of a run, with its `tool-call` and `tool-result` events around it. Every
 * executed call goes through here, whether the model asked for it directly or code in the sandbox did.
 */
export async function traceToolCall<T>(
  frame: RunFrame,
  call: { toolCallId: string; name: string; input: unknown; background?: true },
  execute: () => Promise<T>,
  /** Says why an output that came back is still a failure (a sub-agent that was cancelled, failed...). */
  failure?: (output: T) => string | undefined,
): Promise<T> {
  emit(frame, {
    type: 'tool-call',
    toolCallId: call.toolCallId,
    name: call.name,
    input: call.input,
    ...(call.background ? { background: true } : {}),
  });
  const started = performance.now();
  try {
    const output = await execute();
    collectOutputUrls(output, frame.seenUrls);
    const failed = failure?.(output);
    const stored = storedOutput(output, frame.limits.maxStoredOutputChars);
    emit(frame, {
      type: 'tool-result',
      toolCallId: call.toolCallId,
      name: call.name,
      ok: !failed,
      output: stored,
      ...(failed ? { error: failed } : {}),
      ms: Math.round(performance.now() - started),
    });
    if (!failed) frame.completedCalls.push({ toolCallId: call.toolCallId, name: call.name, output: stored });
    return output;
  } catch (error) {
    emit(frame, {
      type: 'tool-result',
      toolCallId: call.toolCallId,
      name: call.name,
      ok: false,
      error: describeError(error),
      ms: Math.round(performance.now() - started),
    });
    throw error;
  }
}

/**
 * The context a tool sees when `frame` calls it. `call` is the call it serves (its id names the calls it
 * makes in turn, `<id>/<n>`, the same in every attempt, so a resumed attempt finds their start records)
 * and where it records its own start.
 */
export function toolContext(
  frame: RunFrame,
  registry: ToolRegistry,
  signal = frame.signal,
  call?: { id: string; recordStart?: ToolContext['recordStart'] },
): ToolContext {
  let nested = 0;
  return {
    ...(call?.recordStart ? { recordStart: call.recordStart } : {}),
    runId: frame.id,
    agent: frame.definition.name,
    depth: frame.depth,
    signal,
    vault: frame.vault,
    userId: frame.tree.userId,
    sessionId: frame.tree.sessionId,
    inputs: frame.inputs,
    allowedTools: () => [...frame.directTools],
    emit: (body) => emit(frame, body),
    callTool: (name, input, options) =>
      callAllowedTool(
        frame,
        registry,
        name,
        input,
        options?.signal ? AbortSignal.any([signal, options.signal]) : signal,
        call ? `${call.id}/${++nested}` : `nested-${++nestedCallCounter}`,
      ),
  };
}

let nestedCallCounter = 0;

/**
 * A tool call made from inside another tool (code mode). Only the run's own direct tools exist here;
 * anything else is refused as if it did not exist, and inputs are validated like a model's.
 */
async function callAllowedTool(
  frame: RunFrame,
  registry: ToolRegistry,
  name: string,
  input: unknown,
  signal: AbortSignal,
  toolCallId: string,
) {
  const target = frame.directTools.has(name) ? registry.get(name) : undefined;
  if (!target) throw new ModelBehaviorError('tool_input', `no tool named "${name}" is available here`);
  const parsed = target.input.safeParse(input);
  if (!parsed.success) {
    const message = `invalid input for ${name}: ${parsed.error.issues.map((issue) => `${issue.path.join('.') || 'input'}: ${issue.message}`).join('; ')}`;
    emitRefusedCall(frame, { toolCallId, name, input }, message);
    throw new ModelBehaviorError('tool_input', message);
  }
  const call = { toolCallId, name, input: parsed.data };
  const output = await traceToolCall(frame, call, async () => {
    // A call the code made before the process died (the code runs again on resume, making its calls in
    // the same order, so under the same ids) is dealt with and asked again, as a direct call is.
    const rerun = await interruptedStart(frame, toolCallId, target, toolContext(frame, registry, signal));
    await gateToolCall(frame, call, target, rerun);
    const recordStart = startRecorder(frame, toolCallId, rerun?.run ?? 1);
    const context = toolContext(frame, registry, signal, { id: toolCallId, recordStart });
    return jsonOutput(name, await target.execute(parsed.data, context));
  });
  // Code that read a web page hands what it made of it to the model through run_js's own output.
  if (target.toModelOutput && isUntrustedModelOutput(target.toModelOutput(output)))
    frame.readUntrusted = true;
  return output;
}

/**
 * Cuts a model-bound tool output to the run's limit, saying so where it was cut. An object's JSON is the
 * one its journal entry and event were stored with, when the store made it for the same call
 * (output-json.ts).
 */
export function boundedModelOutput(value: unknown, maxChars: number) {
  const text =
    typeof value === 'string'
      ? value
      : typeof value === 'object' && value !== null
        ? outputJson(value)
        : JSON.stringify(value ?? null);
  if (text.length <= maxChars) {
    return typeof value === 'string'
      ? { type: 'text' as const, value }
      : { type: 'json' as const, value: value as any };
  }
  const cut = `${text.slice(0, maxChars)}\n[output truncated: ${text.length - maxChars} more characters not shown]`;
  return { type: 'text' as const, value: cut };
}

/**
 * What a tool returned, once it is known to have a JSON form. The model, the journal and the events all
 * take it as JSON, so an output without one (a cycle, a BigInt, a function) is that call's failure, said
 * as such, rather than an error thrown later from inside the next model call, which would end the whole run.
 * The JSON made here is the one the journal, the event and the model's view reuse (output-json.ts).
 */
export function jsonOutput<T>(tool: string, output: T): T {
  outputReturned(output);
  let reason: string | undefined;
  if (typeof output === 'bigint' || typeof output === 'function' || typeof output === 'symbol') {
    reason = `a ${typeof output} has no JSON form`;
  } else if (typeof output === 'object' && output !== null) {
    try {
      outputJson(output);
    } catch (error) {
      reason = describeError(error).split('\n')[0];
    }
  }
  if (reason === undefined) return output;
  throw new SystemError(
    'tool_output_not_json',
    `${tool} returned an output that is not JSON (${reason}); a tool must return plain data`,
    { tool },
  );
}

/**
 * Throws, with its `tool-call` and `tool-result` events, when the call was refused before parsing
 * (tool-call-bounds.ts) but its stand-in arguments still passed the tool's schema (a tool whose inputs are
 * all optional): such a call must never run.
 */
export function refuseBoundedCall(frame: RunFrame, toolCallId: string, name: string, input: unknown): void {
  const reason = frame.refusedCalls.get(toolCallId);
  if (!reason) return;
  emitRefusedCall(frame, { toolCallId, name, input }, reason);
  throw new ModelBehaviorError('tool_call_refused', reason);
}

/**
 * Runs a tool call through the tree's journal: a result an earlier attempt committed is given back
 * without running the tool again (its error thrown again); a fresh result, or a failure the model will
 * see, is committed before the model hears of it. A call cut short by cancellation is not committed.
 */
export async function journaledCall<T>(
  frame: RunFrame,
  toolCallId: string,
  execute: () => Promise<T>,
): Promise<T> {
  const journal = frame.tree.record.journal;
  if (!journal) return execute();
  const recorded = journal.get(frame.journalKey, 'tool-result', toolCallId) as
    | JournaledToolResult
    | undefined;
  if (recorded) {
    if (recorded.ok) return recorded.output as T;
    throw new SystemError('tool_failed', recorded.error ?? 'the tool failed');
  }
  goLive(frame);
  // Handed over at this boundary (a worker stopping): the call is made where the run goes on.
  if (frame.signal.reason instanceof RunHandedOff) throw frame.signal.reason;
  try {
    const output = await execute();
    // A child that ended because its tree is being stopped has no result worth keeping.
    if (!frame.signal.aborted)
      await journal.put(
        frame.journalKey,
        'tool-result',
        toolCallId,
        { ok: true, output: storedOutput(output, frame.limits.maxStoredOutputChars) },
        'soon',
      );
    return output;
  } catch (error) {
    if (!frame.signal.aborted) {
      await journal.put(
        frame.journalKey,
        'tool-result',
        toolCallId,
        { ok: false, error: describeError(error) },
        'soon',
      );
    }
    throw error;
  }
}

/** Binds a registry tool to a run: the AI SDK tool the model is offered. */
export function bindDirectTool(frame: RunFrame, registry: ToolRegistry, cadreTool: CadreTool): Tool {
  return tool({
    description: cadreTool.description,
    inputSchema: sdkSchema(cadreTool.input),
    execute: (input: unknown, options: { toolCallId: string }) => {
      refuseBoundedCall(frame, options.toolCallId, cadreTool.name, input);
      const call = { toolCallId: options.toolCallId, name: cadreTool.name, input };
      return traceToolCall(frame, call, () =>
        journaledCall(frame, call.toolCallId, async () => {
          // Started by an attempt that was interrupted: what is left of it is dealt with first, and the
          // person is asked again, told that it may have run.
          const rerun = await interruptedStart(
            frame,
            call.toolCallId,
            cadreTool,
            toolContext(frame, registry),
          );
          // A call that needs a person waits here, between its tool-call and tool-result events.
          await gateToolCall(frame, call, cadreTool, rerun);
          const recordStart = startRecorder(frame, call.toolCallId, rerun?.run ?? 1);
          const context = toolContext(frame, registry, frame.signal, { id: call.toolCallId, recordStart });
          return jsonOutput(cadreTool.name, await cadreTool.execute(input, context));
        }),
      );
    },
    toModelOutput: ({ output }: { output: unknown }) => {
      const view = cadreTool.toModelOutput ? cadreTool.toModelOutput(output) : output;
      if (isUntrustedModelOutput(view)) frame.readUntrusted = true;
      return boundedModelOutput(view, frame.limits.maxToolOutputChars);
    },
  } as any) as Tool;
}

/**
 * The same tools, declared (name, description, input schema) but with nothing to run: for calls made with
 * `toolChoice: 'none'` (the last call after `maxTurns`, the structured-output repair). Their history holds
 * calls to these tools, and Anthropic ("Requests which include `tool_use` blocks must define tools") and
 * Gemini refuse such a history when the tools are not declared; a call the model makes anyway is not run.
 */
export function declaredOnly(tools: Record<string, Tool>): Record<string, Tool> {
  const declared: Record<string, Tool> = {};
  for (const [name, bound] of Object.entries(tools)) {
    declared[name] = tool({
      ...(bound.description !== undefined ? { description: bound.description } : {}),
      inputSchema: bound.inputSchema,
    } as never);
  }
  return declared;
}
