import { realpathSync, type Stats } from 'node:fs';
import { type FileHandle, realpath } from 'node:fs/promises';
import path from 'node:path';
import { ModelBehaviorError } from '../../core/errors.ts';
import { HeldFolder, LeavesRootError, type OpenBelowOptions, openBelow } from './held-open.ts';

/** A path the model asked for that lies outside the workspace root (or could not be checked). */
export class OutsideWorkspaceError extends Error {
  override name = 'OutsideWorkspaceError';
}

/** Where a checked path is: its absolute real location and its path relative to the root. */
export interface ConfinedPath {
  absolute: string;
  relative: string;
}

/** A file (or, for a read, a folder) opened inside the root, and where it is (links resolved). */
export interface OpenedPath {
  handle: FileHandle;
  info: Stats;
  relative: string;
  /** True when a write open made the file. */
  created: boolean;
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
   * Opens a model-given path for a tool that reads or writes it, through `openBelow` (held-open.ts): no
   * link, `..` or folder renamed meanwhile can carry the open out of the root, and what is opened is a
   * regular file (or, for a read, a folder), checked on the handle. The caller closes the handle.
   */
  async open(requested: string, options: OpenBelowOptions = {}): Promise<OpenedPath> {
    const parts = this.#parts(requested);
    if (options.write && !parts.length)
      throw new ModelBehaviorError('tool_input', 'the workspace root is a folder, not a file');
    try {
      const opened = await openBelow(this.root, parts, options);
      return {
        handle: opened.handle,
        info: opened.info,
        relative: opened.parts.join('/') || '.',
        created: opened.created,
      };
    } catch (error) {
      throw this.#explained(error, requested);
    }
  }

  /** A workspace folder held open, for listing it and walking below it; the caller closes it. */
  async holdFolder(requested: string): Promise<HeldFolder> {
    const opened = await this.open(requested);
    if (!opened.info.isDirectory()) {
      await opened.handle.close();
      throw new ModelBehaviorError('tool_input', `"${requested}" is a file; use read_file`);
    }
    const parts = opened.relative === '.' ? [] : opened.relative.split('/');
    return new HeldFolder(opened.handle, parts, path.join(this.root, ...parts));
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

  /** The names below the root that `requested` spells, checked as `#lexical` checks them. */
  #parts(requested: string): string[] {
    const relative = path.relative(this.root, this.#lexical(requested));
    return relative ? relative.split(path.sep) : [];
  }

  /** A failed open as the model should read it, naming the path it gave. */
  #explained(error: unknown, requested: string): unknown {
    if (error instanceof LeavesRootError)
      return new OutsideWorkspaceError(`"${requested}" resolves outside the workspace (${error.message})`);
    if (error instanceof ModelBehaviorError)
      return new ModelBehaviorError('tool_input', `"${requested}": ${error.message}`);
    switch ((error as NodeJS.ErrnoException).code) {
      case 'ENOENT':
      case 'ENOTDIR':
        return new ModelBehaviorError('tool_input', `no such file or directory: ${requested}`);
      case 'EISDIR':
        return new ModelBehaviorError('tool_input', `"${requested}" is a directory`);
      case 'ELOOP':
        return new ModelBehaviorError('tool_input', `"${requested}": too many levels of symbolic links`);
      default:
        return error;
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
