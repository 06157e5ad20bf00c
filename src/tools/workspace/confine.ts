import { realpathSync } from 'node:fs';
import { lstat, mkdir, realpath } from 'node:fs/promises';
import path from 'node:path';
import { ModelBehaviorError } from '../../core/errors.ts';

/** A path the model asked for that lies outside the workspace root (or could not be checked). */
export class OutsideWorkspaceError extends Error {
  override name = 'OutsideWorkspaceError';
}

/** Where a checked path is: its absolute real location and its path relative to the root. */
export interface ConfinedPath {
  absolute: string;
  relative: string;
}

/**
 * The workspace root every workspace tool is confined to. Confinement compares real paths with
 * `path.relative`, never string prefixes: `/ws-other` starts with `/ws` but is not inside it, and a
 * symlink (or a symlinked parent) pointing out of the root is outside however its name reads.
 */
export class Workspace {
  readonly root: string;

  constructor(root: string) {
    // A root that does not exist (yet) fails each call with "no such file", not Cadre's start-up.
    const absolute = path.resolve(root);
    try {
      this.root = realpathSync(absolute);
    } catch {
      this.root = absolute;
    }
  }

  /** True when `absolute` (already real) is the root or below it. */
  contains(absolute: string): boolean {
    const relative = path.relative(this.root, absolute);
    return (
      relative === '' ||
      (!relative.startsWith(`..${path.sep}`) && relative !== '..' && !path.isAbsolute(relative))
    );
  }

  /** The path relative to the root, with forward slashes, as tools report it. */
  relative(absolute: string): string {
    return path.relative(this.root, absolute).split(path.sep).join('/') || '.';
  }

  /**
   * Resolves a model-given relative path and refuses it unless it, and every symlink on the way, stays
   * inside the root. The path must exist.
   */
  async resolve(requested: string): Promise<ConfinedPath> {
    const lexical = this.#lexical(requested);
    let real: string;
    try {
      real = await realpath(lexical);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT')
        throw new ModelBehaviorError('tool_input', `no such file or directory: ${requested}`);
      throw error;
    }
    if (!this.contains(real)) {
      throw new OutsideWorkspaceError(
        `"${requested}" resolves outside the workspace (through a symbolic link)`,
      );
    }
    return { absolute: real, relative: this.relative(real) };
  }

  /**
   * Resolves a path a tool will write to. The file may not exist yet: its deepest existing ancestor must
   * really be inside the root (so a symlinked folder cannot carry the write out), missing folders below
   * it are created, and an existing file that is a symlink is followed only when its target is inside.
   * Callers open the returned path with `O_NOFOLLOW`, so a link swapped in after this check fails the write.
   */
  async resolveForWrite(requested: string): Promise<ConfinedPath & { exists: boolean }> {
    const lexical = this.#lexical(requested);
    if (lexical === this.root)
      throw new ModelBehaviorError('tool_input', 'the workspace root is a folder, not a file');
    const existing = await lstat(lexical).catch(() => undefined);
    if (existing?.isSymbolicLink()) {
      let target: string;
      try {
        target = await realpath(lexical);
      } catch {
        throw new OutsideWorkspaceError(`"${requested}" is a symbolic link to a missing target`);
      }
      if (!this.contains(target)) {
        throw new OutsideWorkspaceError(
          `"${requested}" resolves outside the workspace (through a symbolic link)`,
        );
      }
      return { absolute: target, relative: this.relative(target), exists: true };
    }
    // Walk up to the deepest ancestor that exists and check where it really is.
    let ancestor = path.dirname(lexical);
    const missing: string[] = [];
    for (;;) {
      const info = await lstat(ancestor).catch(() => undefined);
      if (info) break;
      missing.unshift(path.basename(ancestor));
      ancestor = path.dirname(ancestor);
    }
    const realAncestor = await realpath(ancestor);
    if (!this.contains(realAncestor)) {
      throw new OutsideWorkspaceError(
        `"${requested}" resolves outside the workspace (through a symbolic link)`,
      );
    }
    const folder = path.join(realAncestor, ...missing);
    if (missing.length) {
      await mkdir(folder, { recursive: true });
      // A folder swapped for a link while it was being made would carry the write out: check again.
      if (!this.contains(await realpath(folder))) {
        throw new OutsideWorkspaceError(`"${requested}" resolves outside the workspace`);
      }
    }
    const absolute = path.join(folder, path.basename(lexical));
    return { absolute, relative: this.relative(absolute), exists: existing !== undefined };
  }

  /**
   * Where `requested` really is, workspace-relative, without changing anything: the path itself when it
   * exists (through every symlink), else its deepest existing ancestor's real place plus the rest. What
   * approval rules are matched against; a path that ends up outside throws.
   */
  async locate(requested: string): Promise<string> {
    const lexical = this.#lexical(requested);
    let ancestor = lexical;
    const missing: string[] = [];
    for (;;) {
      const real = await realpath(ancestor).catch(() => undefined);
      if (real !== undefined) {
        const absolute = path.join(real, ...missing);
        if (!this.contains(absolute))
          throw new OutsideWorkspaceError(`"${requested}" resolves outside the workspace`);
        return this.relative(absolute);
      }
      if (ancestor === this.root || path.dirname(ancestor) === ancestor) {
        throw new OutsideWorkspaceError(`"${requested}" could not be resolved`);
      }
      missing.unshift(path.basename(ancestor));
      ancestor = path.dirname(ancestor);
    }
  }

  #lexical(requested: string): string {
    if (requested.includes('\0')) throw new OutsideWorkspaceError('the path contains a NUL byte');
    const trimmed = requested.trim() || '.';
    if (path.isAbsolute(trimmed) || /^[a-zA-Z]:[\\/]/.test(trimmed) || trimmed.startsWith('~')) {
      throw new OutsideWorkspaceError(
        `"${requested}" is absolute; give a path relative to the workspace root`,
      );
    }
    const absolute = path.resolve(this.root, trimmed);
    if (!this.contains(absolute)) throw new OutsideWorkspaceError(`"${requested}" is outside the workspace`);
    return absolute;
  }
}
