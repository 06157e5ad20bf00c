import type { Attributes, Context, Span, SpanStatusCode, Tracer } from '@opentelemetry/api';
import type { CadreEvent, RunStartEvent } from '../../core/events.ts';
import type { Usage } from '../../core/usage.ts';

/** The parts of `@opentelemetry/api` the span builder uses, handed in so this file loads nothing itself. */
export interface TraceApi {
  rootContext: Context;
  withSpan(parent: Span): Context;
  statusCodes: { OK: SpanStatusCode; ERROR: SpanStatusCode };
}

interface RunSpans {
  span: Span;
  agent: string;
  model: string;
  conversationId: string | undefined;
  /** Open `execute_tool` spans by tool call id. */
  tools: Map<string, { span: Span; name: string; hasChild: boolean }>;
}

/**
 * Turns Cadre's events into OpenTelemetry spans named and attributed as the GenAI semantic conventions
 * say: `invoke_agent {agent}` per run, `chat {model}` per model call, `execute_tool {tool}` per tool
 * call. A sub-agent's `invoke_agent` span is the child of the parent's `execute_tool` span that started
 * it, so the span tree is the run tree. Spans take their times from the events, so they say when things
 * happened, not when they were exported.
 */
export class EventSpans {
  readonly #tracer: Tracer;
  readonly #api: TraceApi;
  readonly #runs = new Map<string, RunSpans>();

  constructor(tracer: Tracer, api: TraceApi) {
    this.#tracer = tracer;
    this.#api = api;
  }

  apply(event: CadreEvent): void {
    if (event.type === 'run-start') {
      this.#startRun(event);
      return;
    }
    const run = this.#runs.get(event.runId);
    if (!run) return;
    switch (event.type) {
      case 'tool-call': {
        const span = this.#tracer.startSpan(
          `execute_tool ${event.name}`,
          {
            startTime: event.time,
            attributes: {
              'gen_ai.operation.name': 'execute_tool',
              'gen_ai.tool.name': event.name,
              'gen_ai.tool.call.id': event.toolCallId,
              'gen_ai.agent.id': event.runId,
            },
          },
          this.#api.withSpan(run.span),
        );
        if (event.refused) this.#fail(span, 'refused', event.refused);
        run.tools.set(event.toolCallId, { span, name: event.name, hasChild: false });
        return;
      }
      case 'tool-result': {
        const tool = run.tools.get(event.toolCallId);
        if (!tool) return;
        run.tools.delete(event.toolCallId);
        if (!event.ok) this.#fail(tool.span, 'tool_error', event.error ?? 'the tool failed');
        tool.span.end(event.time);
        return;
      }
      case 'step-finish': {
        if (event.modelStartedAt === undefined) return;
        const span = this.#tracer.startSpan(
          `chat ${run.model}`,
          {
            startTime: event.modelStartedAt,
            attributes: {
              ...modelAttributes(run.model),
              'gen_ai.operation.name': 'chat',
              'gen_ai.agent.id': event.runId,
              ...usageAttributes(event.usage),
              'gen_ai.response.finish_reasons': [event.finishReason],
              ...(run.conversationId ? { 'gen_ai.conversation.id': run.conversationId } : {}),
            },
          },
          this.#api.withSpan(run.span),
        );
        if (event.finishReason === 'error') this.#fail(span, 'model_error', 'the model call failed');
        span.end(event.modelEndedAt ?? event.time);
        return;
      }
      case 'run-error':
        run.span.addEvent('run-error', { status: event.status, message: event.message }, event.time);
        return;
      case 'run-finish': {
        run.span.setAttributes({
          ...usageAttributes(event.usage),
          'cadre.run.status': event.status,
          'cadre.subtree.total_tokens': event.subtreeUsage.totalTokens,
        });
        if (event.status === 'ok' || event.status === 'partial') {
          run.span.setStatus({ code: this.#api.statusCodes.OK });
        } else {
          this.#fail(run.span, event.status, event.summary.slice(0, 500));
        }
        // Tool spans still open (a cancelled call that never reported) end with their run.
        for (const tool of run.tools.values()) tool.span.end(event.time);
        run.span.end(event.time);
        this.#runs.delete(event.runId);
        return;
      }
      default:
        return;
    }
  }

  #startRun(event: RunStartEvent): void {
    const parent = event.parentRunId ? this.#runs.get(event.parentRunId) : undefined;
    // The delegation that started this run: the parent's open call to a tool named as this agent.
    const call = parent
      ? [...parent.tools.values()].find((tool) => tool.name === event.agent && !tool.hasChild)
      : undefined;
    if (call) call.hasChild = true;
    const parentSpan = call?.span ?? parent?.span;
    const conversationId = event.sessionId ?? parent?.conversationId;
    const attributes: Attributes = {
      ...modelAttributes(event.model),
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.agent.name': event.agent,
      'gen_ai.agent.id': event.runId,
      'cadre.run.depth': event.depth,
      ...(conversationId ? { 'gen_ai.conversation.id': conversationId } : {}),
      ...(event.parentRunId ? { 'cadre.run.parent_id': event.parentRunId } : {}),
    };
    const span = this.#tracer.startSpan(
      `invoke_agent ${event.agent}`,
      { startTime: event.time, attributes },
      parentSpan ? this.#api.withSpan(parentSpan) : this.#api.rootContext,
    );
    this.#runs.set(event.runId, {
      span,
      agent: event.agent,
      model: modelName(event.model),
      conversationId,
      tools: new Map(),
    });
  }

  #fail(span: Span, type: string, message: string): void {
    span.setStatus({ code: this.#api.statusCodes.ERROR, message });
    span.setAttribute('error.type', type);
  }
}

/**
 * A usage as the GenAI conventions name it: the totals, and the cache and reasoning parts of them (each
 * included in its total, as the conventions say) when the provider reported any.
 */
function usageAttributes(usage: Usage): Attributes {
  return {
    'gen_ai.usage.input_tokens': usage.inputTokens,
    'gen_ai.usage.output_tokens': usage.outputTokens,
    ...(usage.cacheReadTokens ? { 'gen_ai.usage.cache_read.input_tokens': usage.cacheReadTokens } : {}),
    ...(usage.cacheWriteTokens ? { 'gen_ai.usage.cache_creation.input_tokens': usage.cacheWriteTokens } : {}),
    ...(usage.reasoningTokens ? { 'gen_ai.usage.reasoning.output_tokens': usage.reasoningTokens } : {}),
  };
}

/** `openai:gpt-5-mini` → provider `openai`, model `gpt-5-mini`, as the conventions name them. */
function modelAttributes(reference: string): Attributes {
  const colon = reference.indexOf(':');
  return colon > 0
    ? {
        'gen_ai.provider.name': reference.slice(0, colon),
        'gen_ai.request.model': reference.slice(colon + 1),
      }
    : { 'gen_ai.request.model': reference };
}

function modelName(reference: string): string {
  const colon = reference.indexOf(':');
  return colon > 0 ? reference.slice(colon + 1) : reference;
}
