import { CadreError } from '../core/errors.ts';
import { describeModelError } from '../core/model-errors.ts';

/** Exit codes: 0 ok, 1 the run did not end ok, 2 the person's input or config, 3 the system, 130 Ctrl-C. */
export const EXIT = { ok: 0, notOk: 1, usage: 2, system: 3, interrupted: 130 } as const;

/** Prints an error for a person (no stack) and returns the exit code it deserves. */
export function reportError(error: unknown, stderr: NodeJS.WritableStream): number {
  if (CadreError.isInstance(error)) {
    stderr.write(`cadre: ${error.message}\n`);
    return error.fault === 'user' ? EXIT.usage : EXIT.system;
  }
  stderr.write(`cadre: ${describeModelError(error)}\n`);
  if (process.env.CADRE_DEBUG && error instanceof Error && error.stack) stderr.write(`${error.stack}\n`);
  return EXIT.system;
}
