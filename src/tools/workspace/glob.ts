import { z } from 'zod';
import { defineTool } from '../../core/tool.ts';
import type { Workspace } from './confine.ts';
import { compileGlob } from './glob-pattern.ts';
import { runScope } from './run-scope.ts';
import { WALK_TIME_LIMIT_MS, walkFiles } from './walk.ts';
import { asWorkspaces, type Workspaces, workspaceOf } from './workspaces.ts';

const MAX_GLOB_RESULTS = 500;

/** `glob {pattern}`: files in the workspace whose relative path matches, .gitignore honoured. */
export function createGlobTool(source: Workspaces | Workspace | string) {
  const workspaces = asWorkspaces(source);
  return defineTool({
    name: 'glob',
    family: 'workspace',
    description:
      'List workspace files whose path matches a glob pattern (e.g. "src/**/*.ts", "**/*.md", "*.json"). ' +
      'Paths are relative to the workspace root; files ignored by .gitignore are left out.',
    input: z.object({
      pattern: z.string().min(1).max(500).describe('Glob relative to the workspace root, e.g. "src/**/*.ts"'),
    }),
    async execute({ pattern }, context) {
      const workspace = workspaceOf(workspaces, context);
      const matches = compileGlob(pattern);
      const scope = runScope(context);
      const files: string[] = [];
      let truncated = false;
      let timedOut = false;
      const walk = walkFiles(workspace, { signal: context.signal, onTimeLimit: () => (timedOut = true) });
      for await (const file of walk) {
        if (!matches(file.relative) || !scope.includes(file.relative)) continue;
        if (files.length >= MAX_GLOB_RESULTS) {
          truncated = true;
          break;
        }
        files.push(file.relative);
      }
      return {
        pattern,
        files,
        count: files.length,
        ...(truncated || timedOut ? { truncated: true } : {}),
        ...(timedOut ? { timedOut: `the listing stopped after ${WALK_TIME_LIMIT_MS / 1000} s` } : {}),
      };
    },
  });
}
