import picomatch from 'picomatch';
import { ModelBehaviorError } from '../../core/errors.ts';
import type { ToolContext } from '../../core/tool.ts';
import { compileGlob } from './glob-pattern.ts';

/**
 * The part of the workspace one run may look at, from its `scope` and `maxFiles` inputs (seed 004's
 * ExploreRequest: a folder or a glob, and a limit on how many files it reads). The workspace tools hold
 * a run to it in code: glob and grep return only files in scope, read_file refuses files outside it and
 * new files past maxFiles, list_dir stays under the scope's folder. A run without them sees the workspace.
 */
export interface RunScope {
  scope: string | undefined;
  /** Files in scope (workspace-relative paths). */
  includes(relative: string): boolean;
  /** Folders whose listing is in scope. */
  includesFolder(relative: string): boolean;
  /** Counts a file read; an error message when it is a new file past maxFiles. */
  noteRead(relative: string): string | undefined;
}

const MAX_TRACKED_RUNS = 1_000;
/** Files each run has read, for maxFiles; the oldest runs are forgotten first. */
const filesRead = new Map<string, Set<string>>();

/** The calling run's scope; a run with no `scope` or `maxFiles` input gets the whole workspace. */
export function runScope(context: Pick<ToolContext, 'runId' | 'inputs'>): RunScope {
  const scope = typeof context.inputs.scope === 'string' ? normalize(context.inputs.scope) : undefined;
  const maxFiles = typeof context.inputs.maxFiles === 'number' ? context.inputs.maxFiles : undefined;
  const whole = !scope || scope === '.' || scope === '**' || scope === '**/*';
  let includes: (relative: string) => boolean = () => true;
  let base = '';
  if (!whole && picomatch.scan(scope).isGlob) {
    includes = compileGlob(scope);
    base = picomatch.scan(scope).base;
  } else if (!whole) {
    base = scope;
    includes = (relative) => relative === scope || relative.startsWith(`${scope}/`);
  }
  return {
    scope: whole ? undefined : scope,
    includes,
    includesFolder: (relative) =>
      !base ||
      relative === '.' ||
      relative === base ||
      relative.startsWith(`${base}/`) ||
      `${base}/`.startsWith(`${relative}/`),
    noteRead(relative) {
      if (maxFiles === undefined) return undefined;
      let read = filesRead.get(context.runId);
      if (!read) {
        if (filesRead.size >= MAX_TRACKED_RUNS) filesRead.delete(filesRead.keys().next().value!);
        read = new Set();
        filesRead.set(context.runId, read);
      }
      if (read.has(relative) || read.size < maxFiles) {
        read.add(relative);
        return undefined;
      }
      return `this run may read at most ${maxFiles} files (maxFiles) and has read ${[...read].join(', ')}; answer from those`;
    },
  };
}

/** A refusal for a path outside the run's scope. */
export function outsideScope(path: string, scope: string): Error {
  return new ModelBehaviorError(
    'tool_input',
    `"${path}" is outside this run's scope "${scope}"; stay within it`,
  );
}

function normalize(scope: string): string {
  const trimmed = scope.trim().replace(/^\.\//, '').replace(/\/+$/, '');
  return trimmed || '.';
}
