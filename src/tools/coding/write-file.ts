import { z } from 'zod';
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

const MAX_CONTENT_CHARS = 1_000_000;

export interface WriteFileOutput {
  path: string;
  created: boolean;
  bytes: number;
  /** The change as a unified diff (a new file shows every line added). */
  diff: string;
  added: number;
  removed: number;
}

/** `write_file {path, content}`: creates or replaces one workspace text file; the result carries the diff. */
export function createWriteFileTool(source: Workspaces | Workspace | string) {
  const workspaces = asWorkspaces(source);
  return defineTool({
    name: 'write_file',
    family: 'coding',
    explicitOnly: true,
    needsApproval: true,
    description:
      'Create a text file in the workspace, or replace its whole content. Missing folders are created. ' +
      'Prefer edit_file to change part of an existing file. The path is relative to the workspace root.',
    input: z.object({
      path: z.string().min(1).max(1000).describe('Path relative to the workspace root'),
      content: z.string().max(MAX_CONTENT_CHARS).describe('The complete new content of the file'),
    }),
    approvalSubject: (input, context) => locatePath(workspaces, context, input.path),
    async execute({ path, content }, context): Promise<WriteFileOutput> {
      codingAllowed(workspaces, context, 'write_file');
      const workspace = workspaceOf(workspaces, context);
      const target = await workspace.open(path, { write: true, create: true });
      let before = '';
      try {
        if (!target.created) before = await readTextFile(target, path);
        await writeTextFile(target, content);
      } finally {
        await target.handle.close();
      }
      const diff = await unifiedDiff(target.relative, before, content);
      return {
        path: target.relative,
        created: target.created,
        bytes: Buffer.byteLength(content),
        diff,
        ...diffStat(diff),
      };
    },
    // The model wrote the content itself; echoing it back as a diff would only spend its context.
    toModelOutput: ({ path, created, bytes, added, removed }) => ({ path, created, bytes, added, removed }),
  });
}
