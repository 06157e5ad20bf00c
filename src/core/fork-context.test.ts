import { describe, expect, it } from 'vitest';
import { MemoryJournal } from '../../test/helpers/memory-journal.ts';
import { agent, echo, executed, secret, setup } from '../../test/helpers/runtime-setup.ts';
import { ScriptedModel, type ScriptedRequest } from '../models/scripted-model.ts';
import { agentDefinitionSchema } from './agent-definition.ts';
import { callSettingsFor } from './model-options.ts';
import { Runtime } from './runtime.ts';
import { ToolRegistry } from './tool-registry.ts';

/** `context: fork`: a child's first request begins exactly as its parent's delegating request did. */

const isFork = (request: ScriptedRequest) =>
  request.prompt.some((message) => JSON.stringify(message.content).includes('You are now the sub-agent'));
/** What a request sends the model: its prompt (system first) and its tool declarations, in order. */
const sent = (request: ScriptedRequest) => ({
  prompt: JSON.parse(JSON.stringify(request.prompt)) as ScriptedRequest['prompt'],
  tools: JSON.parse(JSON.stringify(request.options.tools ?? [])) as Array<{ name: string }>,
});

/** main calls echo, then delegates to forker (context: fork); forker tries main's echo, then answers. */
function forkScript(requests: { main: ScriptedRequest[]; forker: ScriptedRequest[] }) {
  return (request: ScriptedRequest) => {
    if (isFork(request)) {
      requests.forker.push(request);
      const tried = request.toolResults.length > 0;
      return tried
        ? { text: `forker saw: ${JSON.stringify(request.toolResults[0]?.output)}` }
        : { toolCalls: [{ name: 'echo', input: { text: 'from the fork' } }] };
    }
    requests.main.push(request);
    const done = request.toolResults.map((result) => result.toolName);
    if (request.prompt.filter((m) => m.role === 'tool').length === 0)
      return { toolCalls: [{ name: 'echo', input: { text: 'earlier call' } }] };
    if (done.includes('echo')) return { toolCalls: [{ name: 'forker', input: { task: 'dig deeper' } }] };
    return { text: 'main done' };
  };
}

const definitions = () => [
  agent({ name: 'main', tools: ['echo', 'forker'] }),
  agent({ name: 'forker', context: 'fork', tools: ['secret'], instructions: 'Dig; report briefly.' }),
];

describe('context: fork', () => {
  it("starts the child with its parent's exact request prefix (system, tools, messages), then its brief", async () => {
    executed.length = 0;
    const requests = { main: [] as ScriptedRequest[], forker: [] as ScriptedRequest[] };
    const { runtime, events } = setup(forkScript(requests), definitions());
    const outcome = await runtime.run({
      agent: 'main',
      task: 'the question',
      history: [
        { role: 'user', content: 'earlier question' },
        { role: 'assistant', content: 'earlier answer' },
      ],
    });
    expect(outcome.envelope.summary).toBe('main done');
    const delegating = sent(requests.main[1]!);
    const first = sent(requests.forker[0]!);
    // The same system prompt, tool declarations in the same order, the same messages verbatim (the
    // earlier echo call and its result included)…
    expect(first.prompt.slice(0, delegating.prompt.length)).toEqual(delegating.prompt);
    expect(first.tools.slice(0, delegating.tools.length)).toEqual(delegating.tools);
    expect(delegating.tools.map((declared) => declared.name)).toEqual(['echo', 'forker', 'continue_agent']);
    // …then the child's own tools, and one user message: its instructions and its task.
    expect(first.tools.map((declared) => declared.name)).toEqual([
      'echo',
      'forker',
      'continue_agent',
      'secret',
    ]);
    expect(first.prompt).toHaveLength(delegating.prompt.length + 1);
    const brief = JSON.stringify(first.prompt.at(-1));
    expect(first.prompt.at(-1)?.role).toBe('user');
    expect(brief).toContain('Dig; report briefly.');
    expect(brief).toContain('dig deeper');
    expect(JSON.stringify(first.prompt)).toContain('earlier call');
    // main's echo is declared for the fork, not run: the call is refused.
    expect(executed).toEqual(['earlier call']);
    const forked = outcome.tree.children.find((run) => run.agent === 'forker');
    expect(forked?.summary).toContain('not one of forker');
    expect(forked?.forked).toBe(true);
    expect(outcome.tree).not.toHaveProperty('forked');
    expect(events.find((event) => event.type === 'run-start' && event.agent === 'forker')).toMatchObject({
      forked: true,
    });
    expect(events.find((event) => event.type === 'run-start' && event.agent === 'main')).not.toHaveProperty(
      'forked',
    );
  });

  it('a resume replays the forked child from the journal, and a lost step asks with the same prefix', async () => {
    const journal = new MemoryJournal();
    const firstRequests = { main: [] as ScriptedRequest[], forker: [] as ScriptedRequest[] };
    const first = setup(forkScript(firstRequests), definitions());
    const done = await first.runtime.run({ agent: 'main', task: 'the question', record: { journal } });
    expect(done.envelope.summary).toBe('main done');

    // Replayed whole: nothing is asked again.
    const again = { main: [] as ScriptedRequest[], forker: [] as ScriptedRequest[] };
    const replay = setup(forkScript(again), definitions());
    const replayed = await replay.runtime.run({ agent: 'main', task: 'the question', record: { journal } });
    expect(replayed.envelope.summary).toBe('main done');
    expect(again.main.length + again.forker.length).toBe(0);

    // Killed after the fork's first model step: the resume asks the fork's second step again, and its
    // request still begins with main's prefix.
    expect([...journal.entries.keys()]).toContain('r/call_2_0|model-step|1');
    const kept = ['r|model-step|0', 'r|tool-result|call_1_0', 'r|model-step|1', 'r/call_2_0|model-step|0'];
    for (const key of [...journal.entries.keys()]) if (!kept.includes(key)) journal.entries.delete(key);
    const resumed = { main: [] as ScriptedRequest[], forker: [] as ScriptedRequest[] };
    const third = setup(forkScript(resumed), definitions());
    const outcome = await third.runtime.run({ agent: 'main', task: 'the question', record: { journal } });
    expect(outcome.envelope.summary).toBe('main done');
    // Only the fork's lost second step and main's last step are asked again.
    expect(resumed.forker).toHaveLength(1);
    expect(resumed.main).toHaveLength(1);
    expect(resumed.forker[0]!.toolResults[0]?.toolName).toBe('echo');
    const delegating = sent(firstRequests.main[1]!);
    const asked = sent(resumed.forker[0]!);
    expect(asked.prompt.slice(0, delegating.prompt.length)).toEqual(delegating.prompt);
    expect(asked.tools.slice(0, delegating.tools.length)).toEqual(delegating.tools);
  });

  it('refuses to start a fork larger than the token budget left, saying why', async () => {
    const requests = { main: [] as ScriptedRequest[], forker: [] as ScriptedRequest[] };
    const [main, forker] = definitions();
    const { runtime } = setup(forkScript(requests), [main!, { ...forker!, budget: 1_000 }]);
    const outcome = await runtime.run({
      agent: 'main',
      task: 'the question',
      history: [{ role: 'user', content: 'x'.repeat(20_000) }],
    });
    const forked = outcome.tree.children.find((run) => run.agent === 'forker');
    expect(forked?.status).toBe('budget');
    expect(forked?.summary).toMatch(/forked conversation \(about [\d,]+ tokens\).*context: last-N/);
    expect(requests.forker).toHaveLength(0);
  });

  it('is a context policy agent definitions accept, and the error for a wrong one lists it', () => {
    expect(agentDefinitionSchema.parse({ name: 'a', description: 'd', context: 'fork' }).context).toBe(
      'fork',
    );
    const wrong = agentDefinitionSchema.safeParse({ name: 'a', description: 'd', context: 'whole' });
    expect(wrong.error?.issues[0]?.message).toContain('"fork"');
  });

  it("uses its parent's OpenAI prompt cache key on the parent's model, its own on another", async () => {
    const { cacheIdentity } = await import('./fork-context.ts');
    const prefix = { agent: 'main', modelRef: 'openai:gpt-5-mini', instructions: '', tools: [] };
    const forker = { name: 'forker' };
    expect(
      callSettingsFor('openai:gpt-5-mini', cacheIdentity(forker, 'openai:gpt-5-mini', prefix))
        .providerOptions,
    ).toMatchObject({ openai: { promptCacheKey: 'cadre-main' } });
    expect(
      callSettingsFor('openai:gpt-5', cacheIdentity(forker, 'openai:gpt-5', prefix)).providerOptions,
    ).toMatchObject({ openai: { promptCacheKey: 'cadre-forker' } });
  });

  it('a forked run continued by continue_agent goes on from its own conversation, with the same prefix', async () => {
    const forkRequests: ScriptedRequest[] = [];
    const mainRequests: ScriptedRequest[] = [];
    const { runtime } = setup((request) => {
      if (isFork(request)) {
        forkRequests.push(request);
        return { text: JSON.stringify(request.prompt).includes('And the second?') ? 'second' : 'first' };
      }
      mainRequests.push(request);
      const tools = request.prompt.filter((m) => m.role === 'tool').length;
      if (tools === 0) return { toolCalls: [{ name: 'forker', input: { task: 'the first' } }] };
      if (tools === 1) {
        const view = request.toolResults[0]?.output as { run_id?: string };
        return {
          toolCalls: [{ name: 'continue_agent', input: { run_id: view.run_id, message: 'And the second?' } }],
        };
      }
      return { text: `main: ${JSON.stringify(request.toolResults[0]?.output)}` };
    }, definitions());
    const { envelope, tree } = await runtime.run({ agent: 'main', task: 'the question' });
    expect(envelope.summary).toContain('second');
    expect(tree.children.map((run) => [run.agent, run.status, run.forked])).toEqual([
      ['forker', 'ok', true],
      ['forker', 'ok', true],
    ]);
    // The continuation's request: main's instructions and tools, the first run's whole conversation (main's
    // prefix, its brief, its answer), then a brief with the follow-up.
    const [first, again] = forkRequests.map(sent);
    expect(again!.prompt.slice(0, first!.prompt.length)).toEqual(first!.prompt);
    expect(again!.tools).toEqual(first!.tools);
    expect(JSON.stringify(again!.prompt.at(-1))).toContain('And the second?');
  });

  it("on Anthropic, the fork sends main's cache breakpoints (instructions, end of main's conversation) and one on its brief", async () => {
    const requests = { main: [] as ScriptedRequest[], forker: [] as ScriptedRequest[] };
    const model = new ScriptedModel(forkScript(requests));
    const runtime = new Runtime({
      agents: new Map(definitions().map((definition) => [definition.name, definition])),
      tools: new ToolRegistry([echo, secret]),
      resolveModel: () => model,
      mainModel: 'anthropic:claude-test',
    });
    await runtime.run({ agent: 'main', task: 'the question' });
    const delegating = sent(requests.main[1]!).prompt;
    const first = sent(requests.forker[0]!).prompt;
    const ephemeral = { anthropic: { cacheControl: { type: 'ephemeral' } } };
    expect(first[0]).toEqual(delegating[0]);
    expect(first[0]?.providerOptions).toEqual(ephemeral);
    // Everything before the brief is main's as sent, main's moving breakpoint (on its last message)
    // included, so the request is main's up to there; the brief carries the fork's own moving breakpoint.
    expect(first.slice(0, delegating.length)).toEqual(delegating);
    expect(delegating.at(-1)?.providerOptions).toEqual(ephemeral);
    expect(first).toHaveLength(delegating.length + 1);
    expect(first.at(-1)?.providerOptions).toEqual(ephemeral);
  });

  it("refuses the fork's calls to main's sub-agents and continue_agent: declared only, no run started", async () => {
    executed.length = 0;
    const requests = { main: [] as ScriptedRequest[], forker: [] as ScriptedRequest[] };
    const main = forkScript(requests);
    const { runtime, events } = setup((request) => {
      if (!isFork(request)) return main(request);
      requests.forker.push(request);
      if (request.toolResults.length)
        return { text: `refused: ${request.toolResults.map((result) => result.toolName).join(', ')}` };
      return {
        toolCalls: [
          { name: 'forker', input: { task: 'fork again' } },
          { name: 'continue_agent', input: { run_id: 'run_x', message: 'go on' } },
          { name: 'echo', input: { text: 'from the fork' } },
        ],
      };
    }, definitions());
    const outcome = await runtime.run({ agent: 'main', task: 'the question' });
    expect(outcome.envelope.summary).toBe('main done');
    const forked = outcome.tree.children.filter((run) => run.agent === 'forker');
    // One fork (main's delegation), none started by the fork itself; nothing of main's ran for it.
    expect(forked).toHaveLength(1);
    expect(forked[0]!.children).toEqual([]);
    expect(events.filter((event) => event.type === 'run-start')).toHaveLength(2);
    expect(executed).toEqual(['earlier call']);
    const results = requests.forker[1]!.toolResults;
    expect(results.map((result) => result.toolName)).toEqual(['forker', 'continue_agent', 'echo']);
    for (const result of results) expect(JSON.stringify(result.output)).toContain('not one of forker');
  });

  it('as the prefetch agent (before its parent has sent anything) gets the conversation with its own prefix', async () => {
    const prompts: ScriptedRequest[] = [];
    const { runtime } = setup((request) => {
      if (request.system.includes('Dig; report briefly.')) {
        prompts.push(request);
        return { text: 'prefetched: the earlier answer was 7' };
      }
      return {
        text: request.system.includes('prefetched: the earlier answer was 7') ? 'main used it' : 'no',
      };
    }, definitions());
    const outcome = await runtime.run({
      agent: 'main',
      task: 'the question',
      history: [
        { role: 'user', content: 'earlier question' },
        { role: 'assistant', content: 'earlier answer' },
      ],
      prefetch: { agent: 'forker' },
    });
    expect(outcome.envelope.summary).toBe('main used it');
    expect(JSON.stringify(prompts[0]?.prompt)).toContain('earlier answer');
    expect(prompts).toHaveLength(1);
  });
});
