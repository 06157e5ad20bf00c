import type { Cadre } from '../app/create-cadre.ts';
import { withoutControls } from './terminal-text.ts';

/**
 * Says on stderr what configuration was not applied and which agent files were skipped, and why. Both
 * quote a project's own files (a stranger's repository), so control sequences in them are not obeyed.
 */
export function reportSetupNotes(cadre: Cadre, stderr: NodeJS.WritableStream): void {
  for (const warning of cadre.warnings) stderr.write(`cadre: ${withoutControls(warning)}\n`);
  for (const problem of cadre.catalog.problems)
    stderr.write(`cadre: skipped agent file ${withoutControls(problem.message)}\n`);
}
