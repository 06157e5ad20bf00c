/**
 * Builds AI SDK UI message streams in Cadre's chat protocol (the shapes of `src/app/answer/protocol.ts`)
 * for browser tests that stand in for the server: the rendering benchmark's 50 runs × 200 events, and
 * layouts the scripted model cannot easily reach.
 */

import type { RunPartData } from '../../src/app/answer/protocol.ts';
import type { CadreEvent } from '../../src/core/events.ts';

type Chunk = Record<string, unknown>;

export class UiStream {
  readonly chunks: Chunk[] = [];
  #seq = new Map<string, number>();
  #clock: number;

  constructor(start = Date.now()) {
    this.#clock = start;
  }

  /** Advances the stream's clock (event times and run headers use it). */
  tick(ms: number): number {
    this.#clock += ms;
    return this.#clock;
  }

  start(messageId: string, metadata: Record<string, unknown>): this {
    this.chunks.push({ type: 'start', messageId, messageMetadata: metadata });
    return this;
  }

  run(header: RunPartData): this {
    this.chunks.push({ type: 'data-run', id: header.runId, data: header });
    return this;
  }

  event(
    run: Pick<RunPartData, 'runId' | 'parentRunId' | 'depth' | 'agent'>,
    body: Record<string, unknown>,
  ): this {
    const seq = this.#seq.get(run.runId) ?? 0;
    this.#seq.set(run.runId, seq + 1);
    const data = {
      runId: run.runId,
      parentRunId: run.parentRunId,
      depth: run.depth,
      agent: run.agent,
      seq,
      time: this.#clock,
      ...body,
    } as CadreEvent;
    this.chunks.push({ type: 'data-run-event', data, transient: true });
    return this;
  }

  toolCall(toolCallId: string, toolName: string, input: unknown): this {
    this.chunks.push({ type: 'tool-input-available', toolCallId, toolName, input, dynamic: true });
    return this;
  }

  toolResult(toolCallId: string, output: unknown): this {
    this.chunks.push({ type: 'tool-output-available', toolCallId, output, dynamic: true });
    return this;
  }

  text(id: string, text: string): this {
    this.chunks.push({ type: 'text-start', id });
    for (const piece of text.match(/[\s\S]{1,24}/g) ?? [])
      this.chunks.push({ type: 'text-delta', id, delta: piece });
    this.chunks.push({ type: 'text-end', id });
    return this;
  }

  finish(metadata: Record<string, unknown>): this {
    this.chunks.push({ type: 'message-metadata', messageMetadata: metadata });
    this.chunks.push({ type: 'finish' });
    return this;
  }

  /** The stream as the server sends it (SSE). */
  toSse(): string {
    return `${this.chunks.map((chunk) => `data: ${JSON.stringify(chunk)}\n\n`).join('')}data: [DONE]\n\n`;
  }
}

export const UI_STREAM_HEADERS = {
  'content-type': 'text/event-stream',
  'cache-control': 'no-cache',
  'x-vercel-ai-ui-message-stream': 'v1',
};

/** A tree of `runs` sub-agents under one root, each with `eventsPerRun` events (tool calls and text). */
export function wideTree(
  runs: number,
  eventsPerRun: number,
  start = Date.now(),
): { stream: UiStream; rootRunId: string } {
  const stream = new UiStream(start);
  const rootRunId = 'run-root';
  const root: RunPartData = {
    runId: rootRunId,
    parentRunId: null,
    rootRunId,
    depth: 0,
    agent: 'main',
    task: 'Survey everything',
    model: 'compatible:fixture',
    status: 'running',
    startedAt: start,
  };
  stream.start('answer-1', { sessionId: 'bench', rootRunId }).run(root);
  const children: RunPartData[] = [];
  for (let index = 0; index < runs; index++) {
    const toolCallId = `call-${index}`;
    const child: RunPartData = {
      runId: `run-${index}`,
      parentRunId: rootRunId,
      rootRunId,
      depth: 1,
      agent: index % 3 === 0 ? 'research' : index % 3 === 1 ? 'math' : 'docqa',
      task: `Part ${index + 1}: look into aspect number ${index + 1} of the question and report what you find.`,
      model: 'compatible:fixture',
      status: 'running',
      startedAt: stream.tick(3),
      parentToolCallId: toolCallId,
    };
    children.push(child);
    stream.toolCall(toolCallId, child.agent, { task: child.task }).run(child);
    stream.event(child, {
      type: 'run-start',
      task: child.task,
      model: child.model,
      parentToolCallId: toolCallId,
    });
  }
  // Interleave the runs' events, as parallel siblings do.
  for (let step = 1; step < eventsPerRun - 1; step++) {
    for (const child of children) {
      stream.tick(1);
      if (step % 20 === 1) {
        stream.event(child, {
          type: 'tool-call',
          toolCallId: `${child.runId}-t${step}`,
          name: 'web_search',
          input: { query: `aspect ${step}` },
        });
      } else if (step % 20 === 2) {
        stream.event(child, {
          type: 'tool-result',
          toolCallId: `${child.runId}-t${step - 1}`,
          name: 'web_search',
          ok: true,
          output: { results: [{ title: `Result ${step}`, url: `https://example.org/${step}` }] },
          ms: 40,
        });
      } else {
        stream.event(child, { type: 'text-delta', delta: `word${step} ` });
      }
    }
  }
  const usage = { inputTokens: 400, outputTokens: 100, totalTokens: 500 };
  for (const child of children) {
    const endedAt = stream.tick(2);
    stream.event(child, {
      type: 'run-finish',
      status: 'ok',
      summary: 'Found it.',
      usage,
      subtreeUsage: usage,
    });
    stream.run({ ...child, status: 'ok', endedAt, summary: 'Found it.', usage, subtreeUsage: usage });
    stream.toolResult(child.parentToolCallId!, { status: 'ok', runId: child.runId });
  }
  stream.text('text-1', 'All parts are done.');
  const total = {
    inputTokens: 400 * (runs + 1),
    outputTokens: 100 * (runs + 1),
    totalTokens: 500 * (runs + 1),
  };
  stream.run({
    ...root,
    status: 'ok',
    endedAt: stream.tick(5),
    summary: 'All parts are done.',
    usage,
    subtreeUsage: total,
  });
  stream.finish({ sessionId: 'bench', rootRunId, status: 'ok', usage: total });
  return { stream, rootRunId };
}

/** About 20 KB of the Markdown a long answer has: headings, paragraphs, tables, code blocks, lists. */
export function longMarkdown(): string {
  const parts: string[] = [];
  for (let section = 1; parts.join('\n').length < 20_000; section++) {
    parts.push(`## Section ${section}`, '');
    parts.push(
      `This paragraph of section ${section} has **bold words**, *italics*, \`inline code\` and a [link](https://example.org/${section}), as answers do.`,
      '',
    );
    parts.push('| name | value | note |', '|---|---:|---|');
    for (let row = 1; row <= 6; row++) parts.push(`| item ${row} | ${row * section} | row ${row} |`);
    parts.push('', '```ts');
    for (let line = 1; line <= 8; line++)
      parts.push(`const value${line} = compute(${line}, ${section}); // step ${line}`);
    parts.push('```', '');
    for (let item = 1; item <= 4; item++) parts.push(`- point ${item} of section ${section}`);
    parts.push('');
  }
  return parts.join('\n');
}

/** One answer of `longMarkdown()` text streamed by the main agent, in 24-character deltas. */
export function longAnswerStream(): UiStream {
  const stream = new UiStream();
  const rootRunId = 'run-root';
  const now = Date.now();
  stream.start('answer-1', { sessionId: 'bench', rootRunId }).run({
    runId: rootRunId,
    parentRunId: null,
    rootRunId,
    depth: 0,
    agent: 'main',
    task: 'Write a long answer',
    model: 'compatible:fixture',
    status: 'running',
    startedAt: now,
  });
  const text = longMarkdown();
  stream.text('text-1', text);
  stream.finish({ sessionId: 'bench', rootRunId, status: 'ok' });
  return stream;
}
