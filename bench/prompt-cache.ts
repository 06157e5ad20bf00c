/**
 * Prompt caching on Anthropic, measured on the conformance fixture (test/fixtures/providers/), which caches
 * as the Messages API does. A sub-agent whose instructions and tools are past Anthropic's minimum cacheable
 * size (1,024 tokens) works six steps; printed is the share of its input read from the cache from its
 * second step on, with Cadre's default breakpoints and with `promptCaching: false`. Target: ≥ 70%.
 * Run alone with `node bench/prompt-cache.ts`.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Cadre } from '../src/app/create-cadre.ts';
import { startAnthropicServer } from '../test/fixtures/providers/anthropic-messages.ts';

const STEPS = 6;
const TARGET = 0.7;

/** Instructions of an auditor agent, long enough to be worth caching (about 2,000 tokens). */
const instructions = Array.from(
  { length: 60 },
  (_, line) =>
    `${line + 1}. Check each figure of the ledger with calculate before you state it; keep the working short and cite the line you checked.`,
).join('\n');

export async function runPromptCacheBench(): Promise<{ cachedShare: number; withoutCaching: number }> {
  const cachedShare = await measure(true);
  const withoutCaching = await measure(false);
  console.log(
    'Prompt caching (Anthropic fixture): a sub-agent of 6 steps, instructions and tools ~2,000 tokens',
  );
  console.log(
    `  cached share of its input from step 2 on: ${(cachedShare * 100).toFixed(1)}% (target ≥ ${TARGET * 100}%)`,
  );
  console.log(`  with promptCaching: false:                ${(withoutCaching * 100).toFixed(1)}%`);
  if (cachedShare < TARGET) {
    console.log(`  TARGET MISSED: ${(cachedShare * 100).toFixed(1)}% < ${TARGET * 100}%`);
    process.exitCode = 1;
  }
  return { cachedShare, withoutCaching };
}

async function measure(promptCaching: boolean): Promise<number> {
  const server = await startAnthropicServer((call) => {
    if (call.system.includes('## When to delegate'))
      return call.toolResults.length
        ? { text: 'Audited.' }
        : { toolCalls: [{ name: 'auditor', input: { task: 'Audit the ledger.' } }] };
    const done = call.body.messages && (call.body.messages as unknown[]).length >= STEPS * 2 - 1;
    return done
      ? { text: 'All figures check out.' }
      : { toolCalls: [{ name: 'calculate', input: { expression: `${call.index} * 3` } }] };
  });
  const home = mkdtempSync(join(tmpdir(), 'cadre-bench-cache-'));
  try {
    mkdirSync(join(home, 'agents'));
    writeFileSync(
      join(home, 'agents', 'auditor.md'),
      `---\nname: auditor\ndescription: Audits a ledger's figures one by one.\ntools: [calculate]\nmaxTurns: 10\n---\n${instructions}\n`,
    );
    writeFileSync(join(home, 'config.json'), JSON.stringify({ promptCaching }));
    const cadre = await Cadre.create({
      env: {
        CADRE_HOME: home,
        CADRE_MODEL: 'anthropic:claude-sonnet-4-5',
        ANTHROPIC_API_KEY: 'bench',
        ANTHROPIC_BASE_URL: `${server.url}/v1`,
      },
      cwd: home,
    });
    try {
      const run = await cadre.ask({ userId: 'local', message: 'Audit the ledger.' });
      const result = await run.result;
      if (result.status !== 'ok') throw new Error(`the bench run ended ${result.status}: ${result.answer}`);
    } finally {
      await cadre.close();
    }
    if (server.refusals().length) throw new Error(`refused: ${server.refusals().join('; ')}`);
    const auditor = server.requests.filter((request) =>
      JSON.stringify(request.body.system ?? '').includes('Check each figure'),
    );
    let input = 0;
    let cached = 0;
    for (const request of auditor.slice(1)) {
      const usage = request.usage!;
      input += usage.input + usage.cacheRead + usage.cacheWrite;
      cached += usage.cacheRead;
    }
    return input ? cached / input : 0;
  } finally {
    await server.close();
    rmSync(home, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await runPromptCacheBench();
