import { RE2JS } from 're2js';
import { z } from 'zod';
import { ModelBehaviorError } from '../../core/errors.ts';
import { defineTool } from '../../core/tool.ts';
import type { Workspace } from './confine.ts';
import { compileGlob } from './glob-pattern.ts';
import { readAtMost } from './held-open.ts';
import { runScope } from './run-scope.ts';
import { WALK_TIME_LIMIT_MS, type WalkedFile, walkFiles } from './walk.ts';
import { asWorkspaces, type Workspaces, workspaceOf } from './workspaces.ts';

const DEFAULT_RESULTS = 100;
const MAX_RESULTS = 500;
const MAX_FILE_BYTES = 2 * 1024 * 1024;
const MAX_LINE_CHARS = 300;

/** `grep {pattern, glob?, max_results?}`: regex search over workspace text files. */
export function createGrepTool(source: Workspaces | Workspace | string) {
  const workspaces = asWorkspaces(source);
  return defineTool({
    name: 'grep',
    family: 'workspace',
    description:
      'Search workspace files for a regular expression (RE2 syntax: like JavaScript, without lookaround or ' +
      'backreferences; (?i) for case-insensitive). Optional glob limits the files ' +
      '(e.g. "**/*.ts"). Returns matching lines with file path and 1-based line number; binary files, ' +
      'files over 2 MB and .gitignore-d files are skipped.',
    input: z.object({
      pattern: z
        .string()
        .min(1)
        .max(1000)
        .describe('Regular expression, e.g. "export (function|class) \\\\w+"'),
      glob: z.string().min(1).max(500).optional().describe('Only files matching this glob'),
      max_results: z.number().int().min(1).max(MAX_RESULTS).optional().describe(`Default ${DEFAULT_RESULTS}`),
    }),
    async execute({ pattern, glob, max_results }, context) {
      const workspace = workspaceOf(workspaces, context);
      // RE2 runs in time linear in the input, so no pattern a model writes can freeze the process the way
      // a backtracking regular expression like (a+)+$ can.
      let regex: RE2JS;
      try {
        regex = RE2JS.compile(pattern);
      } catch (error) {
        throw new ModelBehaviorError(
          'tool_input',
          `invalid regular expression (RE2 syntax; no lookaround or backreferences): ${(error as Error).message}`,
        );
      }
      const wanted = max_results ?? DEFAULT_RESULTS;
      const matchesGlob = glob ? compileGlob(glob) : () => true;
      const scope = runScope(context);
      const matches: Array<{ path: string; line: number; text: string }> = [];
      let filesSearched = 0;
      let skippedBinary = 0;
      let truncated = false;
      let timedOut = false;
      const walk = walkFiles(workspace, { signal: context.signal, onTimeLimit: () => (timedOut = true) });
      search: for await (const file of walk) {
        if (!matchesGlob(file.relative) || !scope.includes(file.relative)) continue;
        const text = await readText(file);
        if (text === undefined) {
          skippedBinary++;
          continue;
        }
        filesSearched++;
        const lines = text.split(/\r?\n/);
        for (const [index, line] of lines.entries()) {
          if (!regex.test(line)) continue;
          if (matches.length >= wanted) {
            truncated = true;
            break search;
          }
          matches.push({ path: file.relative, line: index + 1, text: clip(line) });
        }
      }
      return {
        pattern,
        matches,
        filesSearched,
        ...(skippedBinary ? { skippedBinary } : {}),
        ...(truncated || timedOut ? { truncated: true } : {}),
        ...(timedOut ? { timedOut: `the search stopped after ${WALK_TIME_LIMIT_MS / 1000} s` } : {}),
      };
    },
  });
}

/** The file as UTF-8, or undefined when it is binary (a NUL in its first 8 KB), too large or gone. */
async function readText(file: WalkedFile): Promise<string | undefined> {
  const opened = await file.open();
  if (!opened) return undefined;
  try {
    if (opened.info.size > MAX_FILE_BYTES) return undefined;
    const { bytes, more } = await readAtMost(opened.handle, MAX_FILE_BYTES);
    if (more || bytes.subarray(0, 8192).includes(0)) return undefined;
    return bytes.toString('utf8');
  } finally {
    await opened.handle.close();
  }
}

function clip(line: string): string {
  const trimmed = line.trim();
  return trimmed.length > MAX_LINE_CHARS ? `${trimmed.slice(0, MAX_LINE_CHARS)}…` : trimmed;
}
