import { describe, expect, it } from 'vitest';
import { agent, child, setup } from '../../test/helpers/runtime-setup.ts';
import { type ResultEnvelope, toModelView } from './envelope.ts';
import type { TreeSteering } from './tree-record.ts';

/** A person stops one sub-agent of a running tree: it alone ends, and its parent keeps its work. */
describe('stopping one run', () => {
  it('ends that run cancelled with its text, completed tool results and sources, and the parent and siblings go on', async () => {
    let steering: TreeSteering | undefined;
    let stuckRunId: string | undefined;
    const mainFollowUps: unknown[] = [];
    const { runtime, events } = setup(
      (request, who) => {
        if (who === 'main') {
          if (request.toolResults.length === 0)
            return {
              toolCalls: [
                { name: 'stuck', input: { task: 'dig deep' } },
                { name: 'quick', input: { task: 'be quick' } },
              ],
            };
          mainFollowUps.push(...request.toolResults.map((result) => result.output));
          return { text: 'main went on' };
        }
        if (who === 'quick') return { text: 'quick done', delayMs: 50 };
        // stuck: one completed call that returned a page, then a call that waits until it is stopped.
        if (request.toolResults.length === 0)
          return { toolCalls: [{ name: 'echo', input: { text: 'found https://example.org/page' } }] };
        return {
          text: 'So far: https://example.org/page says yes.',
          toolCalls: [{ name: 'slow', input: {} }],
        };
      },
      [
        agent({ name: 'main', tools: ['stuck', 'quick'] }),
        agent({ name: 'stuck', tools: ['echo', 'slow'] }),
        agent({ name: 'quick' }),
      ],
    );
    runtime.bus.subscribe((event) => {
      if (event.type === 'run-start' && event.agent === 'stuck') stuckRunId = event.runId;
      // Stopped once it waits in its slow call, its echo call completed.
      if (event.type === 'tool-call' && event.name === 'slow')
        queueMicrotask(() => expect(steering?.stopRun(stuckRunId!, 'stopped by the person')).toBe(true));
    });
    const outcome = await runtime.run({
      agent: 'main',
      task: 'go',
      record: {
        steer: (given) => {
          steering = given;
        },
      },
    });
    expect(outcome.envelope).toMatchObject({ status: 'ok', summary: 'main went on' });
    const stuck = outcome.tree.children.find((run) => run.agent === 'stuck')!;
    const quick = outcome.tree.children.find((run) => run.agent === 'quick')!;
    expect(stuck.status).toBe('cancelled');
    expect(quick.status).toBe('ok');
    expect(stuck.summary).toContain('[Stopped by the person.]');
    const finish = events.find((event) => event.type === 'run-finish' && event.runId === stuckRunId);
    expect(finish).toMatchObject({ stoppedBy: 'person' });
    // The parent's tool call holds the whole envelope; its model saw the person's stop and the work.
    const result = events.find((event) => event.type === 'tool-result' && event.name === 'stuck');
    const envelope = (result as { output?: unknown } | undefined)?.output as ResultEnvelope;
    expect(envelope).toMatchObject({
      status: 'cancelled',
      stoppedBy: 'person',
      completedCalls: [{ name: 'echo', output: { text: 'found https://example.org/page' } }],
    });
    expect(envelope.sources?.map((source) => source.url)).toEqual(['https://example.org/page']);
    const seen = JSON.stringify(mainFollowUps);
    expect(seen).toContain('the person');
    expect(seen).toContain('So far:');
    expect(seen).toContain('found https://example.org/page');
    expect(seen).toContain('quick done');
  });

  it('stops nothing that does not run, and a stopped run that is the root is left to the tree stop', async () => {
    let steering: TreeSteering | undefined;
    const { runtime } = setup(() => ({ text: 'done' }), [agent({ name: 'main' })]);
    await runtime.run({ agent: 'main', task: 'go', record: { steer: (given) => (steering = given) } });
    expect(steering?.stopRun('run_nope', 'stopped by the person')).toBe(false);
  });

  it('a failing or timed-out child never cancels its siblings', async () => {
    const { runtime } = setup(
      (request, who) => {
        if (who === 'main')
          return request.toolResults.length === 0
            ? {
                toolCalls: [
                  { name: 'failing', input: { task: 'fail' } },
                  { name: 'late', input: { task: 'too slow' } },
                  { name: 'fine', input: { task: 'answer' } },
                ],
              }
            : { text: 'main answered' };
        if (who === 'failing') return { error: { status: 400, message: 'bad request' } };
        if (who === 'late') return { text: 'never in time', delayMs: 5_000 };
        return { text: 'fine answer', delayMs: 400 };
      },
      [
        agent({ name: 'main', tools: ['failing', 'late', 'fine'] }),
        agent({ name: 'failing' }),
        agent({ name: 'late', timeout: 0.2 }),
        agent({ name: 'fine' }),
      ],
    );
    const { envelope, tree } = await runtime.run({ agent: 'main', task: 'go' });
    expect(envelope.status).toBe('ok');
    expect(tree.children.map((run) => [run.agent, run.status])).toEqual([
      ['failing', 'error'],
      ['late', 'timeout'],
      ['fine', 'ok'],
    ]);
    expect(child(tree, 2).summary).toBe('fine answer');
  });

  it("shows a parent's model the person's stop even when the result is cut", () => {
    const view = toModelView(
      {
        status: 'cancelled',
        summary: 'x'.repeat(5_000),
        stoppedBy: 'person',
        usage: { inputTokens: 0, outputTokens: 0, totalTokens: 0 },
        subtreeUsage: { inputTokens: 0, outputTokens: 0, totalTokens: 0 },
        runId: 'run_a',
      } as ResultEnvelope,
      1_000,
    );
    expect(view).toMatchObject({ status: 'cancelled', stopped_by: 'the person' });
    expect(JSON.stringify(view).length).toBeLessThan(1_600);
  });
});
