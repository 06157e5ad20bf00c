/**
 * Cadre on the three big providers' real wire protocols: the same cases run against strict fixture servers
 * for OpenAI's Responses API, Anthropic's Messages API and Gemini's streamGenerateContent
 * (test/fixtures/providers/), reached through each provider's base URL variable as a user's gateway would
 * be. Every request must be one the real API accepts, and every run's cost must equal what the provider
 * would bill from the usage it reported.
 */

import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import type { RunTree } from '../../src/core/run-tree.ts';
import { startOpenAIResponsesServer } from '../fixtures/providers/openai-responses.ts';
import { type Provider, price, providerBill, providers } from '../fixtures/providers/provider-setups.ts';
import type { WireCall, WireReply, WireScript } from '../fixtures/providers/wire-server.ts';
import { tempHome } from '../helpers/cli.ts';
import { cadreInProcess } from '../helpers/cli-in-process.ts';

const isMain = (call: WireCall) => call.system.includes('## When to delegate');
const isMath = (call: WireCall) => call.system.includes("Cadre's maths sub-agent");

interface Answer {
  code: number;
  stderr: string;
  output: {
    answer: string;
    status: string;
    sessionId: string;
    run: RunTree & { subtreeCost?: { amount: number } };
    cost?: { amount: number };
  };
}

/** A Cadre on `provider` with `script` answering, and `ask` to put questions to it. */
async function onProvider(provider: Provider, script: WireScript, config: Record<string, unknown> = {}) {
  const server = await provider.start(script);
  onTestFinished(() => server.close());
  const home = tempHome();
  writeFileSync(
    join(home, 'config.json'),
    JSON.stringify({
      pricing: { [provider.model]: price },
      retry: { maxRetries: 2, baseDelayMs: 1, maxDelayMs: 5 },
      ...config,
    }),
  );
  const env = { CADRE_HOME: home, CADRE_MODEL: provider.model, ...provider.env(server.url) };
  const ask = async (...args: string[]): Promise<Answer> => {
    const result = await cadreInProcess(['ask', '--json', ...args], env);
    return { code: result.code, stderr: result.stderr, output: JSON.parse(result.stdout || '{}') };
  };
  return { server, env, home, ask };
}

/** Main delegates one maths task; math calculates and answers. */
const delegation: WireScript = (call): WireReply => {
  if (isMain(call)) {
    if (call.toolResults.length === 0)
      return { toolCalls: [{ name: 'math', input: { task: 'Compute 17 * 23.' } }] };
    return { text: `The product is ${call.toolResults[0]?.output.match(/391/)?.[0] ?? '?'}.` };
  }
  if (isMath(call)) {
    if (call.toolResults.length === 0)
      return { toolCalls: [{ name: 'calculate', input: { expression: '17 * 23' } }] };
    return { text: '17 * 23 = 391' };
  }
  return { error: { status: 400, message: `unexpected request ${call.index}` } };
};

describe.each(providers)('Cadre on $name', (provider) => {
  it('delegates, and its cost is what the provider bills, cache reads included', async () => {
    const { server, ask } = await onProvider(provider, delegation);
    const { code, output } = await ask('What is 17 * 23?');
    expect(server.refusals()).toEqual([]);
    expect(code).toBe(0);
    expect(output.answer).toBe('The product is 391.');
    const math = output.run.children[0]!;
    expect(math).toMatchObject({ agent: 'math', status: 'ok', summary: '17 * 23 = 391' });
    const billed = server.requests.reduce(
      (sum, request) =>
        sum + (request.usage ? request.usage.input + request.usage.cacheRead + request.usage.cacheWrite : 0),
      0,
    );
    expect(output.run.subtreeUsage.inputTokens).toBe(billed);
    expect(output.cost?.amount).toBeCloseTo(providerBill(server), 8);
    if (provider.name !== 'Anthropic Messages') {
      // The main agent's second step re-sends its long prefix: the automatic cache reads it.
      expect(output.run.usage.cacheReadTokens).toBeGreaterThan(0);
    }
  });

  it('reasons as configured, replays its reasoning across steps, and bills reasoning as the provider does', async () => {
    const reasoning = provider.name === 'OpenAI Responses' ? 'low' : { budgetTokens: 2048 };
    const { server, ask, home } = await onProvider(provider, delegation, { reasoning });
    const { code, output } = await ask('What is 17 * 23?');
    expect(server.refusals()).toEqual([]);
    expect(code).toBe(0);
    expect(output.answer).toBe('The product is 391.');
    expect(output.run.subtreeUsage.reasoningTokens).toBeGreaterThan(0);
    expect(output.cost?.amount).toBeCloseTo(providerBill(server), 8);
    const first = server.requests[0]!.body;
    if (provider.name === 'OpenAI Responses') {
      expect(first.reasoning).toMatchObject({ effort: 'low' });
      // The SDK's warning about temperature goes to the log, not the person's terminal.
      expect(readFileSync(join(home, 'cadre.log'), 'utf8')).toMatch(/temperature/);
    }
    if (provider.name === 'Anthropic Messages')
      expect(first.thinking).toEqual({ type: 'enabled', budget_tokens: 2048 });
    if (provider.name === 'Gemini')
      expect(first.generationConfig).toMatchObject({
        thinkingConfig: { thinkingBudget: 2048, includeThoughts: true },
      });
  });

  it('says so when reasoning spends the whole output limit, and how much it took', async () => {
    const reasoning = provider.name === 'OpenAI Responses' ? 'high' : { budgetTokens: 2048 };
    const { server, ask } = await onProvider(
      provider,
      () => ({ reasoning: 'Thinking at length.', stop: 'length', outputTokens: 4000, reasoningTokens: 4000 }),
      { reasoning },
    );
    const { code, output } = await ask('--agent', 'math', 'A hard one.');
    expect(server.refusals()).toEqual([]);
    expect(code).not.toBe(0);
    expect(output.answer).toMatch(
      /reached its output limit of [\d,]+ tokens .*reasoning took 4,000 of its 4,000 output tokens/,
    );
  });

  it('reports a context that is too long once, without retrying it', async () => {
    const { server, ask } = await onProvider(provider, () => ({
      error: { status: 400, message: 'prompt is too long: 250000 tokens > 200000 maximum' },
    }));
    const { code, output } = await ask('A long one.');
    expect(code).not.toBe(0);
    expect(server.requests).toHaveLength(1);
    expect(output.answer.match(/prompt is too long/g)).toHaveLength(1);
  });

  it('repairs a structured answer with its tools still declared, which the provider accepts', async () => {
    const findings = {
      summary: 'Found it.',
      relevantFiles: ['README.md'],
      keyFindings: ['x'],
      codeSnippets: [],
    };
    const { server, ask } = await onProvider(provider, (call) => {
      if (call.toolsForbidden) return { text: JSON.stringify(findings) };
      if (call.toolResults.length === 0) return { toolCalls: [{ name: 'glob', input: { pattern: '*.md' } }] };
      return { text: 'Not JSON at all.' };
    });
    const { code, output } = await ask('--agent', 'explorer', 'Where is the readme?');
    expect(server.refusals()).toEqual([]);
    expect(code).toBe(0);
    expect(output.run).toMatchObject({ status: 'ok', data: findings });
    expect(server.requests.at(-1)?.body).toHaveProperty('tools');
  });

  it('runs two delegations of one step side by side', async () => {
    const { server, ask } = await onProvider(provider, (call) => {
      if (isMain(call)) {
        if (call.toolResults.length === 0)
          return {
            toolCalls: [
              { name: 'math', input: { task: 'Compute 17 * 23.' } },
              { name: 'math', input: { task: 'Compute 6 * 7.' } },
            ],
          };
        return { text: `Results: ${call.toolResults.length}` };
      }
      if (call.toolResults.length === 0)
        return { toolCalls: [{ name: 'calculate', input: { expression: '1 + 1' } }] };
      return { text: 'done' };
    });
    const { code, output } = await ask('Two sums.');
    expect(server.refusals()).toEqual([]);
    expect(code).toBe(0);
    expect(output.answer).toBe('Results: 2');
    expect(output.run.children.map((child) => child.status)).toEqual(['ok', 'ok']);
  });

  it('ends an agent out of turns with a final answer the provider accepts', async () => {
    const { server, ask } = await onProvider(provider, (call) => {
      if (call.toolsForbidden) return { text: 'Best effort: 42' };
      return { toolCalls: [{ name: 'calculate', input: { expression: '40 + 2' } }] };
    });
    const { output } = await ask('--agent', 'math', '--max-turns', '2', 'Loop forever.');
    expect(server.refusals()).toEqual([]);
    expect(output.run).toMatchObject({ status: 'max_turns', summary: 'Best effort: 42' });
    // The last call declares the tools, forbidden, because its history holds calls to them.
    expect(server.requests.at(-1)?.body).toHaveProperty('tools');
  });

  it('answers a call to a tool that does not exist, and the next request is accepted', async () => {
    const { server, ask } = await onProvider(provider, (call) => {
      if (isMain(call))
        return call.toolResults.length === 0 && call.index === 0
          ? { toolCalls: [{ name: 'made_up_tool', input: { q: 1 } }] }
          : { text: 'Recovered.' };
      return { text: 'unused' };
    });
    const { code, output } = await ask('Use a tool.');
    expect(server.refusals()).toEqual([]);
    expect(code).toBe(0);
    expect(output.answer).toBe('Recovered.');
    expect(output.run.toolCalls[0]).toMatchObject({ name: 'made_up_tool', ok: false });
  });

  it('takes a second turn on the same session', async () => {
    const { server, ask } = await onProvider(provider, delegation);
    const first = await ask('What is 17 * 23?');
    expect(first.code).toBe(0);
    const second = await ask('--session', first.output.sessionId, 'And again?');
    expect(server.refusals()).toEqual([]);
    expect(second.code).toBe(0);
    expect(second.output.answer).toBe('The product is 391.');
  });

  it('takes the next turn after a step stopped in the middle of a delegation', async () => {
    let stopped = false;
    const { server, ask } = await onProvider(provider, (call) => {
      if (isMain(call))
        return call.toolResults.length === 0 && !stopped
          ? { toolCalls: [{ name: 'math', input: { task: 'Compute 17 * 23.' } }] }
          : { text: 'Here again.' };
      // The sub-agent never answers: the run's time limit stops the tree in the middle of main's step.
      return new Promise<WireReply>(() => {});
    });
    const first = await ask('--timeout', '0.5', 'What is 17 * 23?');
    expect(first.output.status).toBe('timeout');
    stopped = true;
    const second = await ask('--session', first.output.sessionId, 'Are you there?');
    expect(server.refusals()).toEqual([]);
    expect(second.code).toBe(0);
    expect(second.output.answer).toBe('Here again.');
  });

  it("keeps a failed turn's error text out of the next turn's history", async () => {
    let failed = false;
    const { server, ask } = await onProvider(provider, () => {
      if (failed) return { text: 'Second answer.' };
      failed = true;
      return { error: { status: 400, message: 'Scripted refusal XYZZY' } };
    });
    const first = await ask('First question?');
    expect(first.output.status).toBe('error');
    expect(first.output.answer).toMatch(/XYZZY/);
    const second = await ask('--session', first.output.sessionId, 'Second question?');
    expect(second.code).toBe(0);
    expect(server.refusals()).toEqual([]);
    const sent = JSON.stringify(server.requests.at(-1)!.body);
    expect(sent).toContain('First question?');
    expect(sent).not.toContain('XYZZY');
  });

  it('retries a rate limit, and a stream that breaks mid-answer once from the step start', async () => {
    let limited = false;
    const { server, ask } = await onProvider(provider, () => {
      if (!limited) {
        limited = true;
        return { error: { status: 429, message: 'Rate limit reached', headers: { 'retry-after': '0' } } };
      }
      return { text: 'After the wait.' };
    });
    const { code, output } = await ask('Hello?');
    expect(code).toBe(0);
    expect(output.answer).toBe('After the wait.');
    expect(server.requests).toHaveLength(2);

    // A stream that breaks in the middle of the answer is tried once more from the step's start; the cut
    // text is not the answer.
    let breaks = 0;
    const broken = await onProvider(provider, () =>
      breaks++ === 0 ? { breakAfter: 'found: 39' } : { text: 'found: 391' },
    );
    const retried = await broken.ask('Count.');
    expect(retried.code).toBe(0);
    expect(retried.output.answer).toBe('found: 391');
    expect(broken.server.requests).toHaveLength(2);

    // Broken twice: reported, once.
    const twice = await onProvider(provider, () => ({ breakAfter: 'found: 39' }));
    const cut = await twice.ask('Count.');
    expect(cut.code).not.toBe(0);
    expect(cut.output.status).toBe('error');
    expect(twice.server.requests).toHaveLength(2);
  });
});

describe('what a retry can and cannot do, and Zero Data Retention', () => {
  const [openai, , gemini] = providers as [Provider, Provider, Provider];

  it('never retries a used-up OpenAI quota, and says what to do', async () => {
    const { server, ask } = await onProvider(openai, () => ({
      error: {
        status: 429,
        type: 'insufficient_quota',
        message: 'You exceeded your current quota, please check your plan and billing details.',
      },
    }));
    const { code, output } = await ask('Hello?');
    expect(code).not.toBe(0);
    expect(server.requests).toHaveLength(1);
    expect(output.answer).toMatch(/quota is used up.*Add credit/);
  });

  it("waits as long as Gemini's RetryInfo asks, past Cadre's own backoff cap", async () => {
    let limited = false;
    const { server, ask } = await onProvider(gemini, () => {
      if (limited) return { text: 'After the wait.' };
      limited = true;
      const details = [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '0.06s' }];
      return {
        error: {
          status: 429,
          body: {
            error: { code: 429, message: 'Resource exhausted.', status: 'RESOURCE_EXHAUSTED', details },
          },
        },
      };
    });
    const started = performance.now();
    const { code, output } = await ask('Hello?');
    expect(code).toBe(0);
    expect(output.answer).toBe('After the wait.');
    expect(server.requests).toHaveLength(2);
    expect(performance.now() - started).toBeGreaterThanOrEqual(60);
  });

  const zdrOpenAI: Provider = {
    ...openai,
    start: (script) => startOpenAIResponsesServer(script, { zeroDataRetention: true }),
  };

  it('works for a Zero Data Retention organisation with the setting: store false, encrypted reasoning', async () => {
    const { server, ask } = await onProvider(zdrOpenAI, delegation, {
      reasoning: 'low',
      zeroDataRetention: true,
    });
    const { code, output } = await ask('What is 17 * 23?');
    expect(server.refusals()).toEqual([]);
    expect(code).toBe(0);
    expect(output.answer).toBe('The product is 391.');
    expect(server.requests[0]!.body).toMatchObject({
      store: false,
      include: ['reasoning.encrypted_content'],
    });
    // The second step sends the first step's reasoning back whole, with the content the server encrypted.
    const second = server.requests.find((request) =>
      (request.body.input as Array<{ type?: string }>).some((item) => item.type === 'reasoning'),
    );
    expect(second).toBeDefined();
  });

  it('finds out from the refusal that the organisation keeps no data, and goes on', async () => {
    const { server, ask } = await onProvider(zdrOpenAI, delegation, { reasoning: 'low' });
    const { code, output } = await ask('What is 17 * 23?');
    expect(code).toBe(0);
    expect(output.answer).toBe('The product is 391.');
    // One refusal, once: every later request goes with store false.
    expect(server.refusals()).toHaveLength(1);
    expect(server.refusals()[0]).toMatch(/not persisted for Zero Data Retention/);
    expect(server.requests.at(-1)!.body).toMatchObject({ store: false });
  });
});

/** Where two request bodies first differ: the bytes before it are what both sent alike. */
function commonPrefix(a: string, b: string): number {
  let at = 0;
  while (at < a.length && at < b.length && a[at] === b[at]) at++;
  return at;
}

const BRIEF = 'You are now the sub-agent \\"sketch\\"';
const isFork = (call: WireCall) => JSON.stringify(call.body).includes(BRIEF);

describe.each(providers)('context: fork on $name', (provider) => {
  it.each([
    ['without reasoning', undefined],
    ['with reasoning', provider.name === 'OpenAI Responses' ? 'low' : { budgetTokens: 2048 }],
  ])(
    "the forked child's request begins byte for byte as main's, the cache reads it, and the bill counts it (%s)",
    async (_, reasoning) => {
      // main calculates, then delegates to sketch (context: fork, no tools of its own); sketch tries main's
      // calculate (refused, not run), then answers.
      const { server, ask, home } = await onProvider(
        provider,
        (call): WireReply => {
          // (On Anthropic the brief shares its user turn with main's last tool result.)
          if (isFork(call)) {
            const refused = call.toolResults.find((result) => result.output.includes('not one of'));
            return refused
              ? { text: `sketch saw: ${refused.output}` }
              : { toolCalls: [{ name: 'calculate', input: { expression: '1234 * 5' } }] };
          }
          if (isMain(call)) {
            if (call.toolResults.length === 0)
              return { toolCalls: [{ name: 'calculate', input: { expression: '6 * 7' } }] };
            if (call.toolResults[0]?.name === 'calculate')
              return { toolCalls: [{ name: 'sketch', input: { task: 'Look again at the product.' } }] };
            return { text: 'Done.' };
          }
          return { error: { status: 400, message: `unexpected request ${call.index}` } };
        },
        reasoning ? { reasoning } : {},
      );
      mkdirSync(join(home, 'agents'));
      writeFileSync(
        join(home, 'agents', 'sketch.md'),
        '---\nname: sketch\ndescription: Looks again at the conversation so far.\ncontext: fork\n---\nYou are the sketch agent. Reply in one line.',
      );
      const { code, output } = await ask('What is 6 * 7?');
      expect(server.refusals()).toEqual([]);
      expect(code).toBe(0);
      expect(output.answer).toBe('Done.');

      const forks = server.requests.filter((request) => request.raw.includes(BRIEF));
      expect(forks).toHaveLength(2);
      const fork = forks[0]!;
      const delegating = server.requests[server.requests.indexOf(fork) - 1]!;
      expect(delegating.raw).not.toContain(BRIEF);
      // Byte for byte the same up to the end of main's conversation; there the brief follows, in the
      // fork's request only.
      const same = commonPrefix(delegating.raw, fork.raw);
      expect(delegating.raw.slice(same)).toMatch(/^[\]}]+,"/);
      expect(fork.raw.indexOf(BRIEF) - same).toBeLessThan(80);
      expect(fork.raw.slice(0, same)).toContain('6 * 7');
      // What follows the conversation in the body (tools in main's order, Gemini's system instruction,
      // settings) is main's too.
      const rest = (raw: string) => {
        const {
          input: _,
          messages: __,
          contents: ___,
          ...others
        } = JSON.parse(raw) as Record<string, unknown>;
        return JSON.stringify(others);
      };
      expect(rest(fork.raw)).toBe(rest(delegating.raw));
      if (provider.name === 'OpenAI Responses')
        expect(fork.body.prompt_cache_key).toBe(delegating.body.prompt_cache_key);

      // The provider read main's whole prefix from its cache (OpenAI counts it in blocks of 128 tokens).
      const sent = (usage = delegating.usage!) => usage.input + usage.cacheRead + usage.cacheWrite;
      expect(fork.usage!.cacheRead).toBeGreaterThan(sent() - 128);
      // sketch's call to main's calculate was refused, not run.
      const sketch = output.run.children[0]!;
      expect(sketch).toMatchObject({ agent: 'sketch', forked: true, status: 'ok' });
      expect(sketch.summary).toContain("not one of sketch's tools");
      expect(JSON.stringify(forks[1]!.body)).not.toContain('6170');
      // The run's usage is what the provider counted, cache reads included, and its cost what it bills.
      expect(sketch.usage.cacheReadTokens).toBe(forks[0]!.usage!.cacheRead + forks[1]!.usage!.cacheRead);
      expect(output.run.subtreeUsage.inputTokens).toBe(
        server.requests.reduce((sum, request) => sum + (request.usage ? sent(request.usage) : 0), 0),
      );
      expect(output.cost?.amount).toBeCloseTo(providerBill(server), 8);
    },
  );
});
