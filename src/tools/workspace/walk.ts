import type { Stats } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import ignore, { type Ignore } from 'ignore';
import type { Workspace } from './confine.ts';
import { type HeldFolder, readAtMost } from './held-open.ts';

/** How long one walk may take: a huge tree (or a slow disk) ends a grep or glob with what it found. */
export const WALK_TIME_LIMIT_MS = 20_000;

/** Folders never walked: version-control internals and installed dependencies. */
const ALWAYS_SKIPPED = new Set(['.git', 'node_modules']);
const MAX_IGNORE_FILE_BYTES = 1024 * 1024;

export interface WalkedFile {
  /** Relative to the workspace root, forward slashes. */
  relative: string;
  /**
   * Opens the file for reading, from the folder the walk holds (so a rename meanwhile cannot put
   * another file in its place); undefined when it is no longer a regular file. Call it before the walk
   * moves on; the caller closes the handle.
   */
  open(): Promise<{ handle: FileHandle; info: Stats } | undefined>;
}

interface IgnoreScope {
  /** The folder holding the .gitignore, relative to the root ('' for the root). */
  base: string;
  rules: Ignore;
}

/**
 * Every file in the workspace, depth first, in name order, skipping what `.gitignore` files along the way
 * exclude. Each folder is held open while it is walked and its sub-folders are opened from it without
 * following links (held-open.ts), so a folder swapped for a link while the walk runs is not entered.
 * A link to a file is followed only when its target is inside the root; linked folders are not descended
 * into (no cycles, no double counting).
 */
export async function* walkFiles(
  workspace: Workspace,
  options: { signal?: AbortSignal; maxFiles?: number; timeLimitMs?: number; onTimeLimit?: () => void } = {},
): AsyncGenerator<WalkedFile> {
  const maxFiles = options.maxFiles ?? 50_000;
  const deadline = performance.now() + (options.timeLimitMs ?? WALK_TIME_LIMIT_MS);
  let seen = 0;
  let stopped = false;
  const overTime = () => {
    if (!stopped && performance.now() > deadline) {
      stopped = true;
      options.onTimeLimit?.();
    }
    return stopped;
  };

  async function* visit(folder: HeldFolder, scopes: IgnoreScope[]): AsyncGenerator<WalkedFile> {
    options.signal?.throwIfAborted();
    const folderRelative = folder.parts.join('/');
    const own = await readIgnoreFile(workspace, folderRelative);
    const active = own ? [...scopes, own] : scopes;
    let entries: import('node:fs').Dirent[];
    try {
      entries = await folder.entries();
    } catch {
      return;
    }
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const entry of entries) {
      if (seen >= maxFiles || overTime()) return;
      options.signal?.throwIfAborted();
      if (ALWAYS_SKIPPED.has(entry.name)) continue;
      const relative = folderRelative ? `${folderRelative}/${entry.name}` : entry.name;
      if (entry.isDirectory()) {
        if (isIgnored(active, relative, true)) continue;
        const child = await folder.child(entry.name);
        if (!child) continue;
        try {
          yield* visit(child, active);
        } finally {
          await child.close();
        }
      } else if (entry.isSymbolicLink()) {
        if (isIgnored(active, relative, false)) continue;
        // Followed from the root, as any path the model names: only to a regular file inside.
        const target = await workspace.open(relative).catch(() => undefined);
        if (!target) continue;
        await target.handle.close();
        if (!target.info.isFile()) continue;
        seen++;
        yield { relative, open: () => openFile(workspace, relative) };
      } else if (entry.isFile()) {
        if (isIgnored(active, relative, false)) continue;
        seen++;
        yield { relative, open: () => folder.file(entry.name) };
      }
    }
  }

  const root = await workspace.holdFolder('.');
  try {
    yield* visit(root, []);
  } finally {
    await root.close();
  }
}

async function openFile(workspace: Workspace, relative: string) {
  const opened = await workspace.open(relative).catch(() => undefined);
  if (opened?.info.isFile()) return opened;
  await opened?.handle.close();
  return undefined;
}

/** True when the workspace's .gitignore files exclude `relative` (a file or, with `isDirectory`, a folder). */
export async function isPathIgnored(
  workspace: Workspace,
  relative: string,
  isDirectory: boolean,
): Promise<boolean> {
  if (relative === '.' || relative === '') return false;
  const parts = relative.split('/');
  if (parts.some((part) => ALWAYS_SKIPPED.has(part))) return true;
  const scopes: IgnoreScope[] = [];
  for (let depth = 0; depth < parts.length; depth++) {
    const scope = await readIgnoreFile(workspace, parts.slice(0, depth).join('/'));
    if (scope) scopes.push(scope);
  }
  return isIgnored(scopes, relative, isDirectory);
}

/**
 * The rules of the .gitignore in `base` (root-relative, '' for the root). Only a regular file inside the
 * root is read: a repository's .gitignore may be a link out of it, or a named pipe or device.
 */
async function readIgnoreFile(workspace: Workspace, base: string): Promise<IgnoreScope | undefined> {
  const file = await openFile(workspace, base ? `${base}/.gitignore` : '.gitignore');
  if (!file) return undefined;
  try {
    const { bytes, more } = await readAtMost(file.handle, MAX_IGNORE_FILE_BYTES);
    if (more) return undefined;
    return { base, rules: ignore().add(bytes.toString('utf8')) };
  } catch {
    return undefined;
  } finally {
    await file.handle.close();
  }
}

function isIgnored(scopes: IgnoreScope[], relative: string, isDirectory: boolean): boolean {
  for (const scope of scopes) {
    const inner = scope.base ? relative.slice(scope.base.length + 1) : relative;
    if (!inner) continue;
    if (scope.rules.ignores(isDirectory ? `${inner}/` : inner)) return true;
  }
  return false;
}
