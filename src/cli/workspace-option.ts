import { statSync } from 'node:fs';
import { resolve } from 'node:path';
import { UserError } from '../core/index.ts';

/** `--workspace DIR` resolved against the current folder; an error naming it when it is not a folder. */
export function workspaceOption(value: string | undefined, cwd: string): string | undefined {
  if (value === undefined) return undefined;
  const path = resolve(cwd, value);
  let isFolder = false;
  try {
    isFolder = statSync(path).isDirectory();
  } catch {
    isFolder = false;
  }
  if (!isFolder)
    throw new UserError(
      'usage',
      `--workspace ${value}: no such folder${path === value ? '' : ` (${path})`}.`,
      {
        workspace: path,
      },
    );
  return path;
}
