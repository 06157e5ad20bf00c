import { describe, expect, it } from 'vitest';
import type { CadreEvent } from '../../core/events.ts';
import { AnswerChunks } from './answer-chunks.ts';
import { AnswerRecorder } from './stored-answer.ts';

const main = { runId: 'root', parentRunId: null, rootRunId: 'root', depth: 0, agent: 'main' };
const usage = { inputTokens: 1, outputTokens: 1, totalTokens: 2 };
let seq = 0;
const event = (body: Record<string, unknown>): CadreEvent =>
  ({ ...main, seq: seq++, time: 1000 + seq, ...body }) as CadreEvent;

/** Main answers, the person says something while it waits for a background run, then the result comes. */
const events = [
  event({ type: 'run-start', task: 'What is the answer?', model: 'm', userId: 'u' }),
  event({ type: 'text-delta', delta: 'Scout is on it.' }),
  event({ type: 'step-finish', step: 0, finishReason: 'stop', usage }),
  event({ type: 'run-message', messageId: 'said-1', text: 'Is scout done yet?', step: 1 }),
  event({ type: 'text-delta', delta: 'Not yet.' }),
  event({ type: 'step-finish', step: 1, finishReason: 'stop', usage }),
  event({ type: 'text-delta', delta: '\n\n' }),
  event({
    type: 'run-message',
    messageId: 'bg-1',
    text: 'The sub-agent scout … has finished.',
    step: 2,
    background: { runId: 'scout', agent: 'scout', status: 'ok', toolCallId: 'call-1' },
  }),
  event({ type: 'text-delta', delta: 'It is 42.' }),
  event({ type: 'step-finish', step: 2, finishReason: 'stop', usage }),
  event({ type: 'run-finish', status: 'ok', summary: 'It is 42.', usage, subtreeUsage: usage }),
];

describe("a person's message to the main agent in its answer", () => {
  it('travels as a data-said part where it joined, the person message event still told to the page', () => {
    const answer = new AnswerChunks('msg', 'ses');
    const chunks = events.flatMap((one) => answer.event(one));
    const said = chunks.findIndex((chunk) => chunk.type === 'data-said');
    expect(chunks[said]).toEqual({ type: 'data-said', id: 'said-1', data: { text: 'Is scout done yet?' } });
    expect(chunks.filter((chunk) => chunk.type === 'data-said')).toHaveLength(1);
    // Main's reply is a text block of its own, after the person's words.
    expect(chunks.slice(said).find((chunk) => chunk.type === 'text-start')).toBeDefined();
    expect(
      chunks.some(
        (chunk) =>
          chunk.type === 'data-run-event' && chunk.data.type === 'run-message' && !chunk.data.background,
      ),
    ).toBe(true);
  });

  it('is kept with the stored answer, in order with main text and the background result', () => {
    const recorder = new AnswerRecorder('msg', 'ses');
    for (const one of events) recorder.event(one);
    const { parts } = recorder.message();
    const shown = parts.flatMap((part) =>
      part.type === 'text'
        ? [part.text.trim()].filter(Boolean)
        : part.type === 'data-said'
          ? [`you: ${part.data.text}`]
          : part.type === 'data-background'
            ? [`background: ${part.data.agent}`]
            : [],
    );
    expect(shown).toEqual([
      'Scout is on it.',
      'you: Is scout done yet?',
      'Not yet.',
      'background: scout',
      'It is 42.',
    ]);
  });
});
