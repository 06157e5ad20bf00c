import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { MemoryJournal, userTexts } from '../../test/helpers/memory-journal.ts';
import { agent, setup } from '../../test/helpers/runtime-setup.ts';
import { ScriptedModel, type ScriptedRequest } from '../models/scripted-model.ts';
import type { CadreEvent } from './events.ts';
import { Runtime } from './runtime.ts';
import { defineTool } from './tool.ts';
import { ToolRegistry } from './tool-registry.ts';
import type { TreeSteering } from './tree-record.ts';

/** A person talks to a running sub-agent: the message joins its next model step, once, also on resume. */

/** Tool steps the run had before this request (a message may come after the last tool message). */
const toolTurns = (request: ScriptedRequest) =>
  request.prompt.filter((message) => message.role === 'tool').length;

describe('messages to a running run', () => {
  it('joins the next model step of that run only, shown as a run-message event, and keeps the loop going', async () => {
    let steering: TreeSteering | undefined;
    let workerId: string | undefined;
    const seen: Record<string, string[]> = { main: [], worker: [] };
    const { runtime, events } = setup(
      (request, who) => {
        seen[who]?.push(userTexts(request));
        if (who === 'main')
          return request.toolResults.length === 0
            ? { toolCalls: [{ name: 'worker', input: { task: 'look around' } }] }
            : { text: 'main done' };
        // The worker would answer at once; the message arrives while its first step's tool runs.
        return toolTurns(request) === 0
          ? { toolCalls: [{ name: 'echo', input: { text: 'first' } }] }
          : { text: userTexts(request).includes('focus on owls') ? 'owls it is' : 'no message seen' };
      },
      [agent({ name: 'main', tools: ['worker'] }), agent({ name: 'worker', tools: ['echo'] })],
    );
    runtime.bus.subscribe((event) => {
      if (event.type === 'run-start' && event.agent === 'worker') workerId = event.runId;
      if (event.type === 'tool-call' && event.name === 'echo')
        expect(steering?.sendMessage(workerId!, { id: 'msg_1', text: 'focus on owls' })).toBe(true);
    });
    const outcome = await runtime.run({
      agent: 'main',
      task: 'go',
      record: { steer: (given) => (steering = given) },
    });
    expect(outcome.tree.children[0]?.summary).toBe('owls it is');
    const joined = events.filter((event) => event.type === 'run-message');
    expect(joined).toMatchObject([
      { runId: workerId, agent: 'worker', messageId: 'msg_1', text: 'focus on owls', step: 1 },
    ]);
    // Sent again (a second delivery of the same message): it joins once.
    expect(seen.worker!.filter((text) => text.includes('focus on owls'))).toHaveLength(1);
    expect(seen.main!.some((text) => text.includes('focus on owls'))).toBe(false);
  });

  it('a message to a run that answers at once keeps it going for one more step', async () => {
    let steering: TreeSteering | undefined;
    let rootId: string | undefined;
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const { runtime } = setup(
      async (request) => {
        if (!userTexts(request).includes('also say hi')) {
          // The person writes while the model is still answering its final text.
          steering?.sendMessage(rootId!, { id: 'msg_hi', text: 'also say hi' });
          await held;
          return { text: 'answer without it' };
        }
        return { text: 'hi, and the answer' };
      },
      [agent({ name: 'main' })],
    );
    runtime.bus.subscribe((event) => {
      if (event.type === 'run-start') rootId = event.runId;
    });
    setTimeout(release, 10);
    const outcome = await runtime.run({
      agent: 'main',
      task: 'go',
      record: { steer: (s) => (steering = s) },
    });
    expect(outcome.envelope.summary).toBe('hi, and the answer');
  });

  it('a resumed attempt replays the message at the step it joined, once, without it being sent again', async () => {
    const journal = new MemoryJournal();
    const echo = defineTool({
      name: 'echo',
      family: 'test',
      description: 'echo',
      input: z.object({ text: z.string() }),
      async execute({ text }) {
        return { text };
      },
    });
    const requests: string[][] = [];
    const attempt = async (onEvent?: (event: CadreEvent, steering: TreeSteering) => void) => {
      let steering: TreeSteering | undefined;
      const runtime = new Runtime({
        agents: new Map([['main', agent({ name: 'main', tools: ['echo'] })]]),
        tools: new ToolRegistry([echo]),
        resolveModel: () =>
          new ScriptedModel((request) => {
            requests.push([userTexts(request)]);
            const turns = toolTurns(request);
            if (turns < 2) return { toolCalls: [{ name: 'echo', input: { text: `call ${turns}` } }] };
            return { text: userTexts(request).includes('use metres') ? 'in metres' : 'no message' };
          }),
        mainModel: 'scripted:test',
      });
      const events: CadreEvent[] = [];
      runtime.bus.subscribe((event) => {
        events.push(event);
        if (steering) onEvent?.(event, steering);
      });
      const outcome = await runtime.run({
        agent: 'main',
        task: 'measure',
        record: { journal, steer: (given) => (steering = given) },
      });
      return { outcome, events };
    };
    const first = await attempt((event, steering) => {
      if (event.type === 'tool-call' && event.input && (event.input as { text: string }).text === 'call 0')
        steering.sendMessage(event.runId, { id: 'msg_m', text: 'use metres' });
    });
    expect(first.outcome.envelope.summary).toBe('in metres');
    expect([...journal.entries.keys()].filter((key) => key.includes('|message|'))).toEqual(['r|message|1']);
    const asked = requests.length;

    // Resumed from the journal: nothing is asked of the model again, and the message joins at step 1 again.
    const second = await attempt();
    expect(requests.length).toBe(asked);
    expect(second.outcome.envelope.summary).toBe('in metres');
    expect(second.events.filter((event) => event.type === 'run-message')).toMatchObject([
      { messageId: 'msg_m', text: 'use metres', step: 1 },
    ]);
  });
});
