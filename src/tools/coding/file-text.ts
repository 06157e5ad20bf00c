import { ModelBehaviorError } from '../../core/errors.ts';
import type { OpenedPath } from '../workspace/confine.ts';
import { readAtMost } from '../workspace/held-open.ts';

/** Files larger than this are neither edited nor diffed: a coding tool is for source, not data dumps. */
export const MAX_EDIT_BYTES = 5 * 1024 * 1024;
/** How much of a diff the tool result keeps (the run tree shows it); the rest is cut with a note. */
export const MAX_DIFF_CHARS = 40_000;

/**
 * Reads an opened workspace text file for a coding tool: refuses folders, huge files and binary ones,
 * naming the path the model gave. (Pipes and devices never get this far: `Workspace.open` refuses them.)
 */
export async function readTextFile(file: OpenedPath, requested: string): Promise<string> {
  if (file.info.isDirectory()) throw new ModelBehaviorError('tool_input', `"${requested}" is a directory`);
  const tooLarge = (size: string) =>
    new ModelBehaviorError(
      'tool_input',
      `"${requested}" is ${size} bytes; files over ${MAX_EDIT_BYTES} bytes are not edited`,
    );
  if (file.info.size > MAX_EDIT_BYTES) throw tooLarge(String(file.info.size));
  const { bytes, more } = await readAtMost(file.handle, MAX_EDIT_BYTES);
  if (more) throw tooLarge(`over ${MAX_EDIT_BYTES}`);
  if (bytes.subarray(0, 8192).includes(0))
    throw new ModelBehaviorError('tool_input', `"${requested}" is a binary file`);
  return bytes.toString('utf8');
}

/**
 * Replaces the content of a file opened by `Workspace.open(…, {write: true})`: the write goes through the
 * handle that was checked, so no link or rename after the open can redirect it. A file with more than one
 * hard link is refused: the other name may be outside the workspace, and writing in place would change
 * it there. The check is made on the opened file, before it is truncated.
 */
export async function writeTextFile(file: OpenedPath, content: string): Promise<void> {
  const opened = await file.handle.stat();
  if (opened.nlink > 1)
    throw new ModelBehaviorError(
      'tool_input',
      `the file has ${opened.nlink} hard links (another name for it may be outside the workspace); it is not written`,
    );
  await file.handle.truncate(0);
  await file.handle.write(content, 0, 'utf8');
}

/** A unified diff of one file's change, as `git diff` prints it, cut at `MAX_DIFF_CHARS`. */
export async function unifiedDiff(relative: string, before: string, after: string): Promise<string> {
  // The diff library (19 modules) loads with the first edit, not with every command's tool list.
  const { createTwoFilesPatch } = await import('diff');
  const patch = createTwoFilesPatch(`a/${relative}`, `b/${relative}`, before, after, '', '', { context: 3 });
  // The first line is a row of "=" that git's format does not have.
  const text = patch.replace(/^=+\n/, '');
  if (text.length <= MAX_DIFF_CHARS) return text;
  return `${text.slice(0, MAX_DIFF_CHARS)}\n[diff truncated: ${text.length - MAX_DIFF_CHARS} more characters]`;
}

/** Lines added and removed in a unified diff, for a one-line summary. */
export function diffStat(diff: string): { added: number; removed: number } {
  let added = 0;
  let removed = 0;
  for (const line of diff.split('\n')) {
    if (line.startsWith('+') && !line.startsWith('+++')) added++;
    else if (line.startsWith('-') && !line.startsWith('---')) removed++;
  }
  return { added, removed };
}
