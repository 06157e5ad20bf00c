import { readdir, readFile, realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import ignore, { type Ignore } from 'ignore';
import type { Workspace } from './confine.ts';

/** Folders never walked: version-control internals and installed dependencies. */
const ALWAYS_SKIPPED = new Set(['.git', 'node_modules']);
const MAX_IGNORE_FILE_BYTES = 1024 * 1024;

export interface WalkedFile {
  absolute: string;
  /** Relative to the workspace root, forward slashes. */
  relative: string;
}

interface IgnoreScope {
  /** The folder holding the .gitignore, relative to the root ('' for the root). */
  base: string;
  rules: Ignore;
}

/**
 * Every file under `start` (a folder inside the workspace), depth first, in name order, skipping what
 * `.gitignore` files along the way exclude. Symbolic links are followed only when their real target is
 * inside the root, and linked folders are not descended into (no cycles, no double counting).
 */
export async function* walkFiles(
  workspace: Workspace,
  start: string,
  options: { signal?: AbortSignal; maxFiles?: number } = {},
): AsyncGenerator<WalkedFile> {
  const maxFiles = options.maxFiles ?? 50_000;
  let seen = 0;
  const scopes = await inheritedScopes(workspace, start);

  async function* visit(folder: string, scopes: IgnoreScope[]): AsyncGenerator<WalkedFile> {
    options.signal?.throwIfAborted();
    const folderRelative = relativeOf(workspace, folder);
    const own = await readIgnoreFile(workspace, folder, folderRelative);
    const active = own ? [...scopes, own] : scopes;
    let entries: import('node:fs').Dirent[];
    try {
      entries = await readdir(folder, { withFileTypes: true });
    } catch {
      return;
    }
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const entry of entries) {
      if (seen >= maxFiles) return;
      if (ALWAYS_SKIPPED.has(entry.name)) continue;
      const absolute = path.join(folder, entry.name);
      const relative = folderRelative ? `${folderRelative}/${entry.name}` : entry.name;
      let isDirectory = entry.isDirectory();
      if (entry.isSymbolicLink()) {
        const target = await realpath(absolute).catch(() => undefined);
        if (!target || !workspace.contains(target)) continue;
        const info = await stat(target).catch(() => undefined);
        if (!info?.isFile()) continue;
        isDirectory = false;
      } else if (!isDirectory && !entry.isFile()) {
        continue;
      }
      if (isIgnored(active, relative, isDirectory)) continue;
      if (isDirectory) {
        yield* visit(absolute, active);
      } else {
        seen++;
        yield { absolute, relative };
      }
    }
  }

  yield* visit(start, scopes);
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
  const scopes = await inheritedScopes(workspace, path.join(workspace.root, path.dirname(relative)), true);
  return isIgnored(scopes, relative, isDirectory);
}

async function inheritedScopes(
  workspace: Workspace,
  folder: string,
  includeSelf = false,
): Promise<IgnoreScope[]> {
  const relative = relativeOf(workspace, folder);
  const chain = relative ? relative.split('/') : [];
  const scopes: IgnoreScope[] = [];
  const depth = includeSelf ? chain.length : chain.length - 1;
  for (let index = -1; index < depth; index++) {
    const base = chain.slice(0, index + 1).join('/');
    const scope = await readIgnoreFile(workspace, path.join(workspace.root, base), base);
    if (scope) scopes.push(scope);
  }
  return scopes;
}

/**
 * The rules of `folder`'s .gitignore. Only a regular file inside the root is read: a repository's
 * .gitignore may be a link out of it, or a named pipe or device that a read would block on forever.
 */
async function readIgnoreFile(
  workspace: Workspace,
  folder: string,
  base: string,
): Promise<IgnoreScope | undefined> {
  const real = await realpath(path.join(folder, '.gitignore')).catch(() => undefined);
  if (!real || !workspace.contains(real)) return undefined;
  const info = await stat(real).catch(() => undefined);
  if (!info?.isFile() || info.size > MAX_IGNORE_FILE_BYTES) return undefined;
  const text = await readFile(real, 'utf8').catch(() => undefined);
  if (text === undefined) return undefined;
  return { base, rules: ignore().add(text) };
}

function isIgnored(scopes: IgnoreScope[], relative: string, isDirectory: boolean): boolean {
  for (const scope of scopes) {
    const inner = scope.base ? relative.slice(scope.base.length + 1) : relative;
    if (!inner) continue;
    if (scope.rules.ignores(isDirectory ? `${inner}/` : inner)) return true;
  }
  return false;
}

function relativeOf(workspace: Workspace, absolute: string): string {
  const relative = workspace.relative(absolute);
  return relative === '.' ? '' : relative;
}
