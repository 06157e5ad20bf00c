import { z } from 'zod';
import { ModelBehaviorError } from '../../core/errors.ts';
import { defineTool } from '../../core/tool.ts';
import type { Workspace } from '../workspace/confine.ts';
import {
  asWorkspaces,
  codingAllowed,
  locatePath,
  type Workspaces,
  workspaceOf,
} from '../workspace/workspaces.ts';
import { diffStat, readTextFile, unifiedDiff, writeTextFile } from './file-text.ts';

export interface EditFileOutput {
  path: string;
  diff: string;
  added: number;
  removed: number;
}

/**
 * `edit_file {path, old, new}`: replaces one exact occurrence of `old`. A text that is missing or appears
 * more than once is refused (nothing is written), so an edit never lands somewhere the model did not mean.
 */
export function createEditFileTool(source: Workspaces | Workspace | string) {
  const workspaces = asWorkspaces(source);
  return defineTool({
    name: 'edit_file',
    family: 'coding',
    explicitOnly: true,
    needsApproval: true,
    description:
      'Replace one exact occurrence of `old` with `new` in a workspace text file. `old` must match the ' +
      'file exactly (whitespace and indentation included) and appear exactly once: add surrounding lines ' +
      'to make it unique. Returns the diff.',
    input: z.object({
      path: z.string().min(1).max(1000).describe('Path relative to the workspace root'),
      old: z.string().min(1).max(200_000).describe('The exact text to replace'),
      new: z.string().max(200_000).describe('The text to put in its place'),
    }),
    approvalSubject: (input, context) => locatePath(workspaces, context, input.path),
    async execute(input, context): Promise<EditFileOutput> {
      codingAllowed(workspaces, context, 'edit_file');
      const workspace = workspaceOf(workspaces, context);
      if (input.old === input.new)
        throw new ModelBehaviorError('tool_input', 'old and new are the same text; nothing to change');
      // One handle from the read to the write: what is written is the file that was read.
      const file = await workspace.open(input.path, { write: true });
      let before: string;
      let after: string;
      try {
        before = await readTextFile(file, input.path);
        const first = before.indexOf(input.old);
        if (first === -1) {
          throw new ModelBehaviorError(
            'tool_input',
            `the text to replace was not found in "${file.relative}"; read the file and copy it exactly`,
          );
        }
        const count = countOccurrences(before, input.old);
        if (count > 1) {
          throw new ModelBehaviorError(
            'tool_input',
            `the text to replace appears ${count} times in "${file.relative}"; include more surrounding lines so it appears once`,
          );
        }
        after = before.slice(0, first) + input.new + before.slice(first + input.old.length);
        await writeTextFile(file, after);
      } finally {
        await file.handle.close();
      }
      const diff = await unifiedDiff(file.relative, before, after);
      return { path: file.relative, diff, ...diffStat(diff) };
    },
  });
}

function countOccurrences(text: string, needle: string): number {
  let count = 0;
  for (let at = text.indexOf(needle); at !== -1; at = text.indexOf(needle, at + 1)) count++;
  return count;
}
