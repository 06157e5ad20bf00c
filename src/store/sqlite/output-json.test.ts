import { describe, expect, it } from 'vitest';
import { toolResult } from '../../../test/helpers/run-events.ts';
import { outputJson } from '../../core/output-json.ts';
import { readSpoolText } from './spool.ts';
import { pendingLines } from './writer-spool.ts';

const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

describe('a tool output serialised once for its journal entry and its event', () => {
  it('gives the same JSON within a turn, and serialises a changed object again in a later turn', async () => {
    const output = { rows: [1, 2, 3] };
    const first = outputJson(output);
    output.rows.push(4);
    expect(outputJson(output)).toBe(first);
    await nextTurn();
    expect(JSON.parse(outputJson(output))).toEqual({ rows: [1, 2, 3, 4] });
  });

  it('spools a tool result whose JSON reads back as the event, also for outputs JSON cannot take', () => {
    const event = toolResult(3, { page: 'x'.repeat(5_000), nested: { a: [1, 'two'] } });
    const [record] = readSpoolText(pendingLines({ kind: 'event', event }));
    expect(record?.kind).toBe('event');
    expect(JSON.parse((record as { body: string }).body)).toEqual(event);
    const cyclic: Record<string, unknown> = { name: 'loop' };
    cyclic.self = cyclic;
    const [odd] = readSpoolText(pendingLines({ kind: 'event', event: toolResult(4, cyclic) }));
    expect(JSON.parse((odd as { body: string }).body).output).toEqual({ name: 'loop', self: '[cycle]' });
  });
});
