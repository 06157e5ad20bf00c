/**
 * The AI SDK baseline for the start-up benchmark, run as its own process: the least a program can do to
 * answer `cadre ask`'s question with the same model server. A main ToolLoopAgent whose `math` tool streams
 * a nested ToolLoopAgent with a mathjs `calculate` (mathjs imported at its first call, as a careful plain
 * program would; at start with `BENCH_SDK_MATHJS_AT_START`), no store, no events, no limits. Reads the
 * server from `CADRE_COMPATIBLE_BASE_URL` and the question from argv.
 */
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { isStepCount, ToolLoopAgent, tool } from 'ai';
import { z } from 'zod';

const provider = createOpenAICompatible({
  name: 'compatible',
  baseURL: process.env.CADRE_COMPATIBLE_BASE_URL ?? '',
  includeUsage: true,
});
const model = provider.chatModel('fixture');
let evaluate: ((expression: string) => unknown) | undefined;
// The fan-out rows time only what happens after main's first answer: mathjs is loaded before it starts, so
// the window holds the sub-agents' work and not one import blocking all four.
if (process.env.BENCH_SDK_MATHJS_AT_START) evaluate = (await import('mathjs')).evaluate;

const math = new ToolLoopAgent({
  model,
  instructions: "You are Cadre's maths sub-agent.",
  stopWhen: isStepCount(6),
  tools: {
    calculate: tool({
      description: 'Evaluate a mathematical expression (mathjs syntax).',
      inputSchema: z.object({ expression: z.string() }),
      execute: async ({ expression }) => {
        evaluate ??= (await import('mathjs')).evaluate;
        return { expression, result: String(evaluate(expression)) };
      },
    }),
  },
});
const main = new ToolLoopAgent({
  model,
  instructions: 'You are Cadre. ## When to delegate',
  stopWhen: isStepCount(12),
  tools: {
    math: tool({
      description: 'Exact calculation.',
      inputSchema: z.object({ task: z.string() }),
      execute: async ({ task }, { abortSignal }) => {
        const result = await math.stream({ prompt: task, abortSignal } as Parameters<typeof math.stream>[0]);
        return { summary: await result.text };
      },
    }),
  },
});

const result = await main.stream({ prompt: process.argv[2] ?? 'Hi' } as Parameters<typeof main.stream>[0]);
process.stdout.write(`${await result.text}\n`);
