import { constants } from 'node:fs';
import { lstat, open, readFile } from 'node:fs/promises';
import { ModelBehaviorError } from '../../core/errors.ts';

/** Files larger than this are neither edited nor diffed: a coding tool is for source, not data dumps. */
export const MAX_EDIT_BYTES = 5 * 1024 * 1024;
/** How much of a diff the tool result keeps (the run tree shows it); the rest is cut with a note. */
export const MAX_DIFF_CHARS = 40_000;

/**
 * Reads an existing workspace text file for a coding tool: refuses folders, devices, pipes (a read would
 * block), huge files and binary ones, naming the path the model gave.
 */
export async function readTextFile(absolute: string, requested: string): Promise<string> {
  const info = await lstat(absolute);
  if (info.isDirectory()) throw new ModelBehaviorError('tool_input', `"${requested}" is a directory`);
  if (!info.isFile()) throw new ModelBehaviorError('tool_input', `"${requested}" is not a regular file`);
  if (info.size > MAX_EDIT_BYTES) {
    throw new ModelBehaviorError(
      'tool_input',
      `"${requested}" is ${info.size} bytes; files over ${MAX_EDIT_BYTES} bytes are not edited`,
    );
  }
  const buffer = await readFile(absolute);
  if (buffer.subarray(0, 8192).includes(0))
    throw new ModelBehaviorError('tool_input', `"${requested}" is a binary file`);
  return buffer.toString('utf8');
}

/**
 * Writes text to a path already checked by `Workspace.resolveForWrite`. `O_NOFOLLOW` makes the write fail
 * if the last component became a symbolic link after the check, so a swapped-in link cannot redirect it.
 * A file with more than one hard link is refused: the other name may be outside the workspace, and
 * writing in place would change it there. The check is made on the opened file, before it is truncated.
 */
export async function writeTextFile(absolute: string, content: string): Promise<void> {
  const existing = await lstat(absolute).catch(() => undefined);
  if (existing && !existing.isFile())
    throw new ModelBehaviorError('tool_input', 'the path exists and is not a regular file');
  const handle = await open(absolute, constants.O_WRONLY | constants.O_CREAT | constants.O_NOFOLLOW, 0o644);
  try {
    const opened = await handle.stat();
    if (!opened.isFile())
      throw new ModelBehaviorError('tool_input', 'the path exists and is not a regular file');
    if (opened.nlink > 1)
      throw new ModelBehaviorError(
        'tool_input',
        `the file has ${opened.nlink} hard links (another name for it may be outside the workspace); it is not written`,
      );
    await handle.truncate(0);
    await handle.writeFile(content, 'utf8');
  } finally {
    await handle.close();
  }
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
