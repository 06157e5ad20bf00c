import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { loadAgentFile } from '../src/agents/loader.ts';
import { type AgentDefinition, agentDefinitionSchema } from '../src/core/agent-definition.ts';
import type { CadreEvent, PlanUpdateEvent } from '../src/core/events.ts';
import { Runtime } from '../src/core/runtime.ts';
import { ToolRegistry } from '../src/core/tool-registry.ts';
import { ScriptedModel, type ScriptedReply, type ScriptedRequest } from '../src/models/scripted-model.ts';
import { calculateTool } from '../src/tools/compute/calculate.ts';
import { vaultGetTool, vaultSetTool } from '../src/tools/compute/vault.ts';
import { updatePlanTool } from '../src/tools/planning/update-plan.ts';
import { createRunJsTool } from '../src/tools/sandbox/run-js.ts';
import { workspaceTools } from '../src/tools/workspace/index.ts';

const agentFile = (name: string) => fileURLToPath(new URL(`../src/agents/${name}.md`, import.meta.url));
const repo = fileURLToPath(new URL('./fixtures/repo', import.meta.url));
const explorer = loadAgentFile(agentFile('explorer'), 'builtin').definition;
const planner = loadAgentFile(agentFile('planner'), 'builtin').definition;
const main = agentDefinitionSchema.parse({
  name: 'main',
  description: 'main',
  instructions: 'You are the main agent.',
  tools: ['explorer', 'planner'],
});

function runtimeWith(
  agents: AgentDefinition[],
  tools: ToolRegistry,
  script: (request: ScriptedRequest) => ScriptedReply,
) {
  const model = new ScriptedModel(script);
  const runtime = new Runtime({
    agents: new Map(agents.map((agent) => [agent.name, agent])),
    tools,
    resolveModel: () => model,
    mainModel: 'scripted:x',
  });
  return { runtime, model };
}

const isExplorer = (request: ScriptedRequest) => request.system.includes("Cadre's codebase explorer");

describe('explorer end to end', () => {
  const findings = {
    summary:
      'Session tokens are HMAC-SHA256 signed payloads, verified in constant time, then checked for expiry.',
    relevantFiles: ['src/auth/session.ts', 'src/auth/middleware.ts'],
    keyFindings: ['verifySession compares signatures with timingSafeEqual (src/auth/session.ts:50)'],
    codeSnippets: [{ path: 'src/auth/session.ts', line: 36, code: 'return createHmac(...)' }],
  };

  function explorerScript(answer: string) {
    let explorerStep = 0;
    return (request: ScriptedRequest): ScriptedReply => {
      if (isExplorer(request)) {
        explorerStep++;
        if (explorerStep === 1) {
          return {
            toolCalls: [
              { name: 'grep', input: { pattern: 'verifySession', glob: 'src/**/*.ts' } },
              { name: 'glob', input: { pattern: 'src/auth/*.ts' } },
            ],
          };
        }
        if (explorerStep === 2)
          return { toolCalls: [{ name: 'read_file', input: { path: 'src/auth/session.ts' } }] };
        return { text: answer };
      }
      if (request.toolResults.length) return { text: 'Tokens are HMAC-signed; see src/auth/session.ts.' };
      return {
        toolCalls: [{ name: 'explorer', input: { task: 'How are session tokens signed and verified?' } }],
      };
    };
  }

  it('reads the code in its own context and hands the parent only validated data', async () => {
    const { runtime, model } = runtimeWith(
      [main, explorer],
      new ToolRegistry(workspaceTools(repo)),
      explorerScript(JSON.stringify(findings)),
    );
    const { envelope, tree } = await runtime.run({ agent: 'main', task: 'How do sessions work here?' });
    expect(envelope.status).toBe('ok');
    const child = tree.children[0]!;
    expect(child).toMatchObject({ agent: 'explorer', status: 'ok', data: findings });
    expect(child.toolCalls.map((call) => call.name)).toEqual(['grep', 'glob', 'read_file']);

    const mainCalls = model.calls.filter((call) => !isExplorer(call));
    const explorerCalls = model.calls.filter(isExplorer);
    expect(JSON.stringify(mainCalls.at(-1)?.toolResults)).toContain('"relevantFiles"');
    // The file's text stayed in the explorer's context.
    expect(JSON.stringify(explorerCalls.at(-1)?.prompt)).toContain('timingSafeEqual(actual, expected)');
    for (const call of mainCalls)
      expect(JSON.stringify(call.prompt)).not.toContain('timingSafeEqual(actual, expected)');
    expect(explorerCalls[0]?.toolNames.sort()).toEqual(['glob', 'grep', 'list_dir', 'read_file']);
  });

  it('marks an answer that does not match the output schema as partial', async () => {
    const { runtime } = runtimeWith(
      [main, explorer],
      new ToolRegistry(workspaceTools(repo)),
      explorerScript('{"summary": 3}'),
    );
    const { tree } = await runtime.run({ agent: 'main', task: 'How do sessions work here?' });
    expect(tree.children[0]).toMatchObject({ agent: 'explorer', status: 'partial' });
    expect(tree.children[0]?.data).toBeUndefined();
  });
});

describe('planner end to end', () => {
  it('states a plan, executes it step by step and emits the checklist as plan-update events', async () => {
    const registry = new ToolRegistry([calculateTool, vaultSetTool, vaultGetTool, updatePlanTool]);
    registry.register(createRunJsTool({ lookup: (name) => registry.get(name) }));
    const steps = (statuses: string[], results: string[] = []) => ({
      steps: ['Price of 3 items at 12.5', 'Add 20 % tax'].map((title, index) => ({
        title,
        status: statuses[index],
        ...(results[index] ? { result: results[index] } : {}),
      })),
    });
    const script: ScriptedReply[] = [
      { toolCalls: [{ name: 'update_plan', input: steps(['pending', 'pending']) }] },
      { toolCalls: [{ name: 'calculate', input: { expression: '3 * 12.5' } }] },
      {
        toolCalls: [
          { name: 'update_plan', input: steps(['done', 'running'], ['37.5']) },
          {
            name: 'run_js',
            input: { code: 'return (await calculate({ expression: "37.5 * 1.2" })).result' },
          },
        ],
      },
      { toolCalls: [{ name: 'update_plan', input: steps(['done', 'done'], ['37.5', '45']) }] },
      { text: 'Total: 45.\n1. Price of 3 items at 12.5: 37.5\n2. Add 20 % tax: 45' },
    ];
    const { runtime, model } = runtimeWith(
      [main, planner],
      registry,
      (request) => script[request.index] ?? { text: '' },
    );
    const events: CadreEvent[] = [];
    const { envelope } = await runtime.run({
      agent: 'planner',
      task: 'Price 3 items at 12.5 with tax',
      onEvent: (event) => events.push(event),
    });
    expect(envelope).toMatchObject({ status: 'ok', summary: expect.stringContaining('Total: 45') });
    const plans = events.filter((event): event is PlanUpdateEvent => event.type === 'plan-update');
    expect(plans.map((plan) => plan.steps.map((step) => step.status).join(','))).toEqual([
      'pending,pending',
      'done,running',
      'done,done',
    ]);
    expect(plans.at(-1)?.steps[1]).toEqual({ title: 'Add 20 % tax', status: 'done', result: '45' });
    expect(plans.every((plan) => plan.agent === 'planner' && plan.runId === envelope.runId)).toBe(true);
    expect(model.calls[0]?.toolNames.sort()).toEqual([
      'calculate',
      'run_js',
      'update_plan',
      'vault_get',
      'vault_set',
    ]);
    expect(planner.maxTurns).toBe(10);
    expect(planner.tools).not.toContain('explorer');
  });
});
