import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { MemoryJournal } from '../../test/helpers/memory-journal.ts';
import { ScriptedModel, type ScriptedRequest } from '../models/scripted-model.ts';
import { agentDefinitionSchema } from './agent-definition.ts';
import type { CadreEvent } from './events.ts';
import { Runtime } from './runtime.ts';
import { defineTool } from './tool.ts';
import { ToolRegistry } from './tool-registry.ts';
import { replayKey, resumePointsOf } from './tree-record.ts';

// A run that goes on from an earlier attempt (a job retried, or set aside and put back) replays its
// journal: the events it repeats carry their stored numbers, so a store keeping one event per (run, seq)
// drops them, and what is new is numbered after everything stored. Whatever the earlier attempt managed
// to store, the store ends with each call, each result and the run's end exactly once.

const wait = defineTool({
  name: 'wait',
  family: 'test',
  description: 'waits',
  input: z.object({ ms: z.number() }),
  async execute({ ms }) {
    await new Promise((resolve) => setTimeout(resolve, ms));
    return { waited: ms };
  },
});

/** Two calls in one step, the first slower (its result comes second), then an answer. */
const script = (request: ScriptedRequest) =>
  request.toolResults.length === 0
    ? {
        toolCalls: [
          { name: 'wait', input: { ms: 40 } },
          { name: 'wait', input: { ms: 2 } },
        ],
      }
    : { text: 'done' };

async function attempt(journal: MemoryJournal, stored?: CadreEvent[]): Promise<CadreEvent[]> {
  const runtime = new Runtime({
    agents: new Map([
      ['main', agentDefinitionSchema.parse({ name: 'main', description: 'main', tools: ['wait'] })],
    ]),
    tools: new ToolRegistry([wait]),
    resolveModel: () => new ScriptedModel(script),
    mainModel: 'scripted:test',
  });
  const events: CadreEvent[] = [];
  runtime.bus.subscribe((event) => events.push(event));
  // What a job's record works out from the store before going on (see app/jobs/job-record.ts).
  const points = resumePointsOf(stored ?? []);
  await runtime.run({
    agent: 'main',
    task: 'wait twice',
    userId: 'u',
    record: { rootRunId: 'run_root', journal, resumePoint: (runId) => points.get(runId) },
  });
  return events.filter((event) => event.runId === 'run_root');
}

/** A store that keeps the first event under each (run, seq), as the PostgreSQL store does. */
function store(...batches: CadreEvent[][]): CadreEvent[] {
  const kept = new Map<number, CadreEvent>();
  for (const event of batches.flat()) if (!kept.has(event.seq)) kept.set(event.seq, event);
  return [...kept.values()];
}

function counts(events: CadreEvent[]): Record<string, number> {
  const seen: Record<string, number> = {};
  for (const event of events) {
    const key = replayKey(event);
    if (key) seen[key] = (seen[key] ?? 0) + 1;
  }
  return seen;
}

describe('a resumed run numbers what it replays and what is new', () => {
  it("stores a parallel call's result the earlier attempt journaled but never stored, once", async () => {
    const journal = new MemoryJournal();
    const first = await attempt(journal);
    // The earlier attempt died after the slow call's result was journaled, before its event was stored,
    // and before its next model step was journaled.
    const lost = first.findIndex(
      (event, index) =>
        event.type === 'tool-result' && index > first.findIndex((e) => e.type === 'tool-result'),
    );
    const stored = first.slice(0, lost);
    for (const key of [...journal.entries.keys()])
      if (key.includes('model-step') && !key.endsWith('|0')) journal.entries.delete(key);
    const replay = await attempt(journal, stored);
    const final = store(stored, replay);
    expect(Object.values(counts(final)).every((count) => count === 1)).toBe(true);
    expect(final.filter((event) => event.type === 'tool-result')).toHaveLength(2);
    expect(final.filter((event) => event.type === 'run-finish')).toHaveLength(1);
  });

  it('repeats the end of a run the earlier attempt had finished and stored, rather than telling it twice', async () => {
    const journal = new MemoryJournal();
    const first = await attempt(journal);
    const replay = await attempt(journal, first);
    const final = store(first, replay);
    expect(final.filter((event) => event.type === 'run-finish')).toHaveLength(1);
    expect(Object.values(counts(final)).every((count) => count === 1)).toBe(true);
  });
});
