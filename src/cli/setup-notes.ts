import type { Cadre } from '../app/create-cadre.ts';

/** Says on stderr what configuration was not applied and which agent files were skipped, and why. */
export function reportSetupNotes(cadre: Cadre, stderr: NodeJS.WritableStream): void {
  for (const warning of cadre.warnings) stderr.write(`cadre: ${warning}\n`);
  for (const problem of cadre.catalog.problems)
    stderr.write(`cadre: skipped agent file ${problem.message}\n`);
}
