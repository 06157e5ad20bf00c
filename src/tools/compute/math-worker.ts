/**
 * Runs in a worker thread: mathjs evaluation is synchronous and a short expression can ask for a
 * 32000×32000 matrix or a product that takes minutes, so it runs where the host can cap its heap and
 * terminate it. The worker loads mathjs once and then answers one expression at a time.
 */
import { parentPort } from 'node:worker_threads';
import { RESULT_FORMAT } from './plain-arithmetic.ts';
import { createSafeMath } from './safe-math.ts';

/** A job from the host. */
export interface MathJob {
  id: number;
  expression: string;
  /** Most characters of formatted result sent back; a larger one is refused, not cut. */
  maxResultChars: number;
}

/** The worker's answer: `ready` once at start, then one reply per job. */
export type MathReply =
  | { ready: true }
  | { id: number; ok: true; result: string }
  | { id: number; ok: false; error: string };

const math = createSafeMath();
const evaluate = math.evaluate;
// mathjs builds each function on its first use: expressions with units and a matrix build the common
// ones now, while the worker is warming up, instead of during the model's first call.
for (const warmUp of ['sqrt(2) * 12 inch to cm', 'det([1, 2; 3, 4])']) evaluate(warmUp, {});

function run(job: MathJob): MathReply {
  let value: unknown;
  try {
    value = evaluate(job.expression, {});
  } catch (error) {
    return {
      id: job.id,
      ok: false,
      error: `could not evaluate "${job.expression}": ${(error as Error).message}`,
    };
  }
  if (typeof value === 'function')
    return { id: job.id, ok: false, error: `"${job.expression}" is a function, not a value` };
  const result = math.format(value as never, RESULT_FORMAT);
  if (result.length > job.maxResultChars) {
    return {
      id: job.id,
      ok: false,
      error: `the result of "${job.expression}" is ${result.length.toLocaleString('en')} characters long, more than the limit of ${job.maxResultChars.toLocaleString('en')}; ask for a summary of it instead (size, sum, max, a slice)`,
    };
  }
  return { id: job.id, ok: true, result };
}

parentPort?.on('message', (job: MathJob) => parentPort?.postMessage(run(job)));
parentPort?.postMessage({ ready: true } satisfies MathReply);
