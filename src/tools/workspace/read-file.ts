import { z } from 'zod';
import { ModelBehaviorError } from '../../core/errors.ts';
import { defineTool } from '../../core/tool.ts';
import type { Workspace } from './confine.ts';
import { readAtMost } from './held-open.ts';
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
      const file = await workspace.open(path);
      let buffer: Buffer;
      try {
        const scope = runScope(context);
        if (scope.scope && !scope.includes(file.relative)) throw outsideScope(path, scope.scope);
        if (file.info.isDirectory())
          throw new ModelBehaviorError('tool_input', `"${path}" is a directory; use list_dir`);
        if (file.info.size > MAX_FILE_BYTES) throw tooLarge(path, file.info.size);
        const refused = scope.noteRead(file.relative);
        if (refused) throw new ModelBehaviorError('tool_input', refused);
        const read = await readAtMost(file.handle, MAX_FILE_BYTES);
        if (read.more) throw tooLarge(path, `over ${MAX_FILE_BYTES}`);
        buffer = read.bytes;
      } finally {
        await file.handle.close();
      }
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

function tooLarge(requested: string, size: number | string): ModelBehaviorError {
  return new ModelBehaviorError(
    'tool_input',
    `"${requested}" is ${size} bytes; files over ${MAX_FILE_BYTES} bytes are not read`,
  );
}
