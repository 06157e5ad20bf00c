import { EXIT, exitCodeFor } from '../app/error-maps.ts';
import { CadreError, describeModelError } from '../core/index.ts';
import { withoutControls } from './terminal-text.ts';

export { EXIT };

/**
 * Prints an error for a person (no stack) and returns the exit code it deserves. Messages quote what was
 * read (a project's config keys, a definition's fields, a server's answer), so control sequences go.
 */
export function reportError(error: unknown, stderr: NodeJS.WritableStream): number {
  if (CadreError.isInstance(error)) {
    stderr.write(`cadre: ${withoutControls(error.message)}\n`);
    return exitCodeFor(error);
  }
  stderr.write(`cadre: ${withoutControls(describeModelError(error))}\n`);
  if (process.env.CADRE_DEBUG && error instanceof Error && error.stack) stderr.write(`${error.stack}\n`);
  return exitCodeFor(error);
}
