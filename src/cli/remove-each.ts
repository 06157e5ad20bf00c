import { CadreError } from '../core/index.ts';
import { EXIT, reportError } from './errors.ts';

/**
 * Removes each of `ids` in turn, as `cadre docs rm` does: one the person got wrong (unknown, someone
 * else's, still running) is reported on stderr and the others are still removed, so a typo in the middle
 * of a list does not leave the ids after it in place. Exit 2 when any was refused; a system fault stops.
 */
export async function removeEach(
  ids: string[],
  remove: (id: string) => Promise<string>,
  output: { stdout: NodeJS.WritableStream; stderr: NodeJS.WritableStream },
): Promise<number> {
  let refused = false;
  for (const id of ids) {
    try {
      output.stdout.write(`${await remove(id)}\n`);
    } catch (error) {
      if (!(CadreError.isInstance(error) && error.fault === 'user')) throw error;
      refused = true;
      reportError(error, output.stderr);
    }
  }
  return refused ? EXIT.usage : EXIT.ok;
}
