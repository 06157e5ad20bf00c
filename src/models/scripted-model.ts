import type {
  LanguageModelV4,
  LanguageModelV4CallOptions,
  LanguageModelV4Prompt,
  LanguageModelV4StreamPart,
} from '@ai-sdk/provider';
import { APICallError } from 'ai';
import { abortableSleep } from '../core/abortable-sleep.ts';

/** One reply of a scripted model: text, tool calls, an error, or a mix, optionally after a delay. */
export interface ScriptedReply {
  text?: string;
  reasoning?: string;
  toolCalls?: Array<{ name: string; input?: unknown; rawInput?: string; id?: string }>;
  /** Throws an API error with this HTTP status (and headers, e.g. Retry-After) instead of answering. */
  error?: { status: number; message?: string; headers?: Record<string, string> };
  /** Waits this long (ms) before answering; aborts cut the wait short. */
  delayMs?: number;
  /** The call's usage as a provider reports it: totals, and the cached and reasoning parts of them. */
  usage?: {
    inputTokens?: number;
    outputTokens?: number;
    cacheReadTokens?: number;
    cacheWriteTokens?: number;
    reasoningTokens?: number;
  };
}

/** What the script sees of each request. */
export interface ScriptedRequest {
  /** 0 for the first call of this model, then 1, 2, ... */
  index: number;
  system: string;
  prompt: LanguageModelV4Prompt;
  /** The text of the last user message. */
  lastUserText: string;
  /** The tool results of the last tool message, in order. */
  toolResults: Array<{ toolName: string; output: unknown }>;
  toolNames: string[];
  toolChoice: LanguageModelV4CallOptions['toolChoice'];
  options: LanguageModelV4CallOptions;
}

export type Script = ScriptedReply[] | ((request: ScriptedRequest) => ScriptedReply | Promise<ScriptedReply>);

/**
 * A language model that answers from a script: a list of replies (the last repeats) or a function from the
 * request to the next reply. It records every request in `calls`, so tests can check what a model was
 * shown, e.g. that a sub-agent saw none of its parent's conversation.
 */
export class ScriptedModel implements LanguageModelV4 {
  readonly specificationVersion = 'v4' as const;
  readonly provider = 'scripted';
  readonly modelId: string;
  readonly supportedUrls = {};
  readonly calls: ScriptedRequest[] = [];
  #script: Script;
  /** Numbers the tool calls this model makes, so ids do not depend on what other models (or tests) did. */
  #toolCallCount = 0;

  constructor(script: Script, modelId = 'scripted') {
    this.#script = script;
    this.modelId = modelId;
  }

  async doGenerate(options: LanguageModelV4CallOptions): Promise<any> {
    const reply = await this.#next(options);
    const content: any[] = [];
    if (reply.reasoning) content.push({ type: 'reasoning', text: reply.reasoning });
    if (reply.text) content.push({ type: 'text', text: reply.text });
    for (const [index, call] of (reply.toolCalls ?? []).entries()) {
      content.push({
        type: 'tool-call',
        toolCallId: this.#callId(call, index),
        toolName: call.name,
        input: rawInput(call),
      });
    }
    return {
      content,
      finishReason: { unified: reply.toolCalls?.length ? 'tool-calls' : 'stop', raw: undefined },
      usage: usageOf(reply, options),
      warnings: [],
    };
  }

  async doStream(options: LanguageModelV4CallOptions) {
    const reply = await this.#next(options);
    const parts: LanguageModelV4StreamPart[] = [{ type: 'stream-start', warnings: [] }];
    if (reply.reasoning) {
      parts.push({ type: 'reasoning-start', id: 'r' });
      parts.push({ type: 'reasoning-delta', id: 'r', delta: reply.reasoning });
      parts.push({ type: 'reasoning-end', id: 'r' });
    }
    if (reply.text) {
      parts.push({ type: 'text-start', id: 't' });
      for (const chunk of reply.text.match(/[\s\S]{1,24}/g) ?? []) {
        parts.push({ type: 'text-delta', id: 't', delta: chunk });
      }
      parts.push({ type: 'text-end', id: 't' });
    }
    for (const [index, call] of (reply.toolCalls ?? []).entries()) {
      parts.push({
        type: 'tool-call',
        toolCallId: this.#callId(call, index),
        toolName: call.name,
        input: rawInput(call),
      });
    }
    parts.push({
      type: 'finish',
      finishReason: { unified: reply.toolCalls?.length ? 'tool-calls' : 'stop', raw: undefined },
      usage: usageOf(reply, options),
    });
    return {
      stream: new ReadableStream<LanguageModelV4StreamPart>({
        start(controller) {
          for (const part of parts) controller.enqueue(part);
          controller.close();
        },
      }),
    };
  }

  #callId(call: { id?: string }, index: number): string {
    return call.id ?? `call_${++this.#toolCallCount}_${index}`;
  }

  async #next(options: LanguageModelV4CallOptions): Promise<ScriptedReply> {
    const request = describeRequest(this.calls.length, options);
    this.calls.push(request);
    const reply =
      typeof this.#script === 'function'
        ? await this.#script(request)
        : (this.#script[Math.min(request.index, this.#script.length - 1)] ?? { text: '' });
    if (reply.delayMs) await abortableSleep(reply.delayMs, options.abortSignal);
    if (reply.error) {
      throw new APICallError({
        message: reply.error.message ?? `scripted error ${reply.error.status}`,
        url: 'scripted://model',
        requestBodyValues: {},
        statusCode: reply.error.status,
        responseHeaders: reply.error.headers ?? {},
        isRetryable: [408, 409, 429].includes(reply.error.status) || reply.error.status >= 500,
      });
    }
    return reply;
  }
}

function rawInput(call: { input?: unknown; rawInput?: string }): string {
  return call.rawInput ?? JSON.stringify(call.input ?? {});
}

function usageOf(reply: ScriptedReply, options: LanguageModelV4CallOptions) {
  const input = reply.usage?.inputTokens ?? Math.ceil(JSON.stringify(options.prompt).length / 4);
  const output =
    reply.usage?.outputTokens ?? Math.ceil(JSON.stringify(reply.toolCalls ?? reply.text ?? '').length / 4);
  const cacheRead = reply.usage?.cacheReadTokens;
  const cacheWrite = reply.usage?.cacheWriteTokens;
  const reasoning = reply.usage?.reasoningTokens;
  return {
    inputTokens: {
      total: input,
      noCache: input - (cacheRead ?? 0) - (cacheWrite ?? 0),
      cacheRead,
      cacheWrite,
    },
    outputTokens: { total: output, text: output - (reasoning ?? 0), reasoning },
  };
}

function describeRequest(index: number, options: LanguageModelV4CallOptions): ScriptedRequest {
  const system = options.prompt
    .filter((message) => message.role === 'system')
    .map((message) => message.content)
    .join('\n');
  const lastUser = [...options.prompt].reverse().find((message) => message.role === 'user');
  const lastUserText =
    lastUser && Array.isArray(lastUser.content)
      ? lastUser.content.map((part) => (part.type === 'text' ? part.text : '')).join('')
      : '';
  const last = options.prompt.at(-1);
  const toolResults =
    last?.role === 'tool'
      ? last.content.flatMap((part) =>
          part.type === 'tool-result' ? [{ toolName: part.toolName, output: unwrapOutput(part.output) }] : [],
        )
      : [];
  const toolNames = (options.tools ?? []).map((tool) => tool.name);
  return {
    index,
    system,
    prompt: options.prompt,
    lastUserText,
    toolResults,
    toolNames,
    toolChoice: options.toolChoice,
    options,
  };
}

function unwrapOutput(output: { type: string; value?: unknown }): unknown {
  return 'value' in output ? output.value : output;
}
