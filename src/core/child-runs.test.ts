import { describe, expect, it } from 'vitest';
import { ScriptedModel } from '../models/scripted-model.ts';
import { agentDefinitionSchema } from './agent-definition.ts';
import type { ChildRunner, ChildRunRequest } from './child-runs.ts';
import { Runtime } from './runtime.ts';
import { ToolRegistry } from './tool-registry.ts';

function runtimeWith(childRunner: (local: ChildRunner) => ChildRunner) {
  const model = new ScriptedModel((request) => {
    if (request.system.includes('MAIN'))
      return request.toolResults.length
        ? { text: `main got: ${JSON.stringify(request.toolResults[0]!.output)}` }
        : { toolCalls: [{ name: 'math', input: { task: 'What is 6*7?' } }] };
    return { text: '42' };
  });
  const agents = new Map(
    [
      { name: 'main', description: 'm', instructions: 'MAIN', tools: ['math'] },
      { name: 'math', description: 'x', instructions: 'MATH', context: 'full' },
    ].map((input) => [input.name, agentDefinitionSchema.parse(input)]),
  );
  return new Runtime({
    agents,
    tools: new ToolRegistry(),
    resolveModel: () => model,
    mainModel: 'scripted:x',
    childRunner,
  });
}

describe('the child-run seam', () => {
  it('starts every child from a request that is plain data, through the runner', async () => {
    const requests: ChildRunRequest[] = [];
    const runtime = runtimeWith((local) => ({
      run: (request, cancellation) => {
        requests.push(request);
        // What a queue would carry: the request survives JSON unchanged.
        return local.run(JSON.parse(JSON.stringify(request)), cancellation);
      },
    }));
    const { envelope, tree } = await runtime.run({
      agent: 'main',
      task: 'Ask math',
      userId: 'alice',
      sessionId: 'ses_1',
    });
    expect(envelope.status).toBe('ok');
    expect(requests).toHaveLength(1);
    const [request] = requests;
    expect(JSON.parse(JSON.stringify(request))).toEqual(request);
    expect(request).toMatchObject({
      agent: 'math',
      task: 'What is 6*7?',
      inputs: {},
      rootRunId: tree.id,
      parentRunId: tree.id,
      depth: 1,
      userId: 'alice',
      sessionId: 'ses_1',
    });
    // `context: full` lets the parent's conversation through, as data.
    expect(request!.context.length).toBeGreaterThan(0);
    expect(tree.children[0]).toMatchObject({ agent: 'math', summary: '42', parentId: tree.id });
  });

  it('hands the parent whatever envelope another runner returns', async () => {
    const runtime = runtimeWith(() => ({
      run: async (request) => ({
        status: 'ok',
        summary: `elsewhere: ${request.task}`,
        usage: { inputTokens: 0, outputTokens: 0, totalTokens: 0 },
        subtreeUsage: { inputTokens: 1, outputTokens: 1, totalTokens: 2 },
        runId: 'run_remote',
      }),
    }));
    const { envelope } = await runtime.run({ agent: 'main', task: 'Ask math' });
    expect(envelope.summary).toContain('elsewhere: What is 6*7?');
    expect(envelope.subtreeUsage.totalTokens).toBeGreaterThanOrEqual(2);
  });
});
