import { readFile, stat } from 'node:fs/promises';
import { z } from 'zod';
import { ModelBehaviorError } from '../../core/errors.ts';
import { defineTool } from '../../core/tool.ts';
import type { Workspace } from './confine.ts';
import { outsideScope, runScope } from './run-scope.ts';
import { asWorkspaces, type Workspaces, workspaceOf } from './workspaces.ts';

const DEFAULT_LINES = 400;
const MAX_LINES = 2000;
const MAX_FILE_BYTES = 5 * 1024 * 1024;
const MAX_CONTENT_CHARS = 100_000;

/** `read_file {path, offset?, limit?}`: a line range of one workspace text file. */
export function createReadFileTool(source: Workspaces | Workspace | string) {
  const workspaces = asWorkspaces(source);
  return defineTool({
    name: 'read_file',
    family: 'workspace',
    description:
      `Read a text file from the workspace. offset is the 1-based first line (default 1), limit the number ` +
      `of lines (default ${DEFAULT_LINES}, at most ${MAX_LINES}). Returns the lines and the file's total line count.`,
    input: z.object({
      path: z.string().min(1).max(1000).describe('Path relative to the workspace root'),
      offset: z.number().int().min(1).optional(),
      limit: z.number().int().min(1).max(MAX_LINES).optional(),
    }),
    async execute({ path, offset, limit }, context) {
      const workspace = workspaceOf(workspaces, context);
      const file = await workspace.resolve(path);
      const scope = runScope(context);
      if (scope.scope && !scope.includes(file.relative)) throw outsideScope(path, scope.scope);
      const info = await stat(file.absolute);
      if (info.isDirectory())
        throw new ModelBehaviorError('tool_input', `"${path}" is a directory; use list_dir`);
      // A named pipe or device would block the read (and a libuv thread) until something writes to it.
      if (!info.isFile()) throw new ModelBehaviorError('tool_input', `"${path}" is not a regular file`);
      if (info.size > MAX_FILE_BYTES) {
        throw new ModelBehaviorError(
          'tool_input',
          `"${path}" is ${info.size} bytes; files over ${MAX_FILE_BYTES} bytes are not read`,
        );
      }
      const refused = scope.noteRead(file.relative);
      if (refused) throw new ModelBehaviorError('tool_input', refused);
      const buffer = await readFile(file.absolute);
      if (buffer.subarray(0, 8192).includes(0))
        throw new ModelBehaviorError('tool_input', `"${path}" is a binary file`);
      const lines = buffer.toString('utf8').split(/\r?\n/);
      const start = Math.min(offset ?? 1, lines.length);
      const wanted = lines.slice(start - 1, start - 1 + (limit ?? DEFAULT_LINES));
      let content = wanted.join('\n');
      let truncated = start - 1 + wanted.length < lines.length;
      if (content.length > MAX_CONTENT_CHARS) {
        content = content.slice(0, MAX_CONTENT_CHARS);
        truncated = true;
      }
      const endLine = start - 1 + content.split('\n').length;
      return {
        path: file.relative,
        startLine: start,
        endLine,
        totalLines: lines.length,
        content,
        ...(truncated ? { truncated: true } : {}),
      };
    },
  });
}
