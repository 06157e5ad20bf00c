import { realpathSync } from 'node:fs';
import { realpath } from 'node:fs/promises';
import path from 'node:path';

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
        throw new Error(`no such file or directory: ${requested}`);
      throw error;
    }
    if (!this.contains(real)) {
      throw new OutsideWorkspaceError(
        `"${requested}" resolves outside the workspace (through a symbolic link)`,
      );
    }
    return { absolute: real, relative: this.relative(real) };
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
