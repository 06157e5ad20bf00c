/**
 * Opening a path inside a root so that no one writing in the same tree at the same moment can carry the
 * open out of it. A check of the resolved path followed by an open by name cannot do this: between the
 * two, a folder on the way can be swapped for a symbolic link (a user's sandboxed `bash` can loop such a
 * swap while their agent calls the file tools, which run in the server's process). Node has no
 * `openat()`, so on Linux each component is opened from the folder held open before it, through
 * `/proc/self/fd/<fd>/<name>`, with `O_NOFOLLOW`: the kernel looks the name up in the folder the handle
 * holds, whatever that folder's path says now, and refuses a link. Links are then followed here, by
 * reading them and resolving their target against the folders already held, refused when they lead out.
 * Every open is non-blocking (a named pipe swapped in opens at once instead of parking a thread), and
 * what was opened is checked on its handle: only regular files and folders are served.
 *
 * Where `/proc/self/fd` is missing (macOS), the same walk opens each component by its full path: links are
 * still refused per component, but a concurrent rename of a parent is not excluded. Shared servers, whose
 * users can run commands, are meant to run on Linux (README, "A shared server").
 */
import { constants, existsSync, type Stats } from 'node:fs';
import { type FileHandle, lstat, mkdir, open, readdir, readlink } from 'node:fs/promises';
import path from 'node:path';
import { ModelBehaviorError } from '../../core/errors.ts';

const { O_RDONLY, O_RDWR, O_CREAT, O_EXCL, O_DIRECTORY, O_NOFOLLOW, O_NONBLOCK, O_NOCTTY } = constants;

/** True where names can be looked up from a held folder (Linux's /proc). */
export const HELD_LOOKUPS = process.platform === 'linux' && existsSync('/proc/self/fd');

const FOLDER_FLAGS = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK;
const READ_FLAGS = O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY;
const WRITE_FLAGS = O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY;
/** Links followed in one lookup before giving up, as the kernel's own limit. */
const MAX_LINKS = 40;

/** A path that leaves the root (through `..` or a link); the workspace turns it into its own error. */
export class LeavesRootError extends Error {
  override name = 'LeavesRootError';
}

/** A folder inside the root, held open: names are looked up in it, whatever its path reads by now. */
export class HeldFolder {
  readonly handle: FileHandle;
  /** Its place below the root, one name per folder ([] for the root itself). */
  readonly parts: string[];
  /** Its path when it was opened (used only where the kernel offers no held lookups). */
  readonly where: string;

  constructor(handle: FileHandle, parts: string[], where: string) {
    this.handle = handle;
    this.parts = parts;
    this.where = where;
  }

  /** A path the kernel resolves from this held folder: `name` in it, or the folder itself. */
  at(name?: string): string {
    if (HELD_LOOKUPS)
      return name === undefined
        ? `/proc/self/fd/${this.handle.fd}`
        : `/proc/self/fd/${this.handle.fd}/${name}`;
    return name === undefined ? this.where : path.join(this.where, name);
  }

  /** Root-relative with forward slashes, '.' for the root. */
  get relative(): string {
    return this.parts.join('/') || '.';
  }

  /** The folder's entries (names and types as the folder holds them now). */
  entries() {
    return readdir(this.at(), { withFileTypes: true });
  }

  /** The sub-folder `name` of this one, held; undefined when it is no longer a folder (or was a link). */
  async child(name: string): Promise<HeldFolder | undefined> {
    const handle = await open(this.at(name), FOLDER_FLAGS).catch(() => undefined);
    return handle && new HeldFolder(handle, [...this.parts, name], path.join(this.where, name));
  }

  /** The regular file `name` of this one, opened for reading; undefined when it is anything else now. */
  async file(name: string): Promise<{ handle: FileHandle; info: Stats } | undefined> {
    const handle = await open(this.at(name), READ_FLAGS).catch(() => undefined);
    if (!handle) return undefined;
    const info = await handle.stat();
    if (info.isFile()) return { handle, info };
    await handle.close();
    return undefined;
  }

  close(): Promise<void> {
    return this.handle.close();
  }
}

/** What an open below the root gave: the handle, what it is, and where (links resolved). */
export interface HeldEntry {
  handle: FileHandle;
  info: Stats;
  parts: string[];
  /** True when a write open made the file. */
  created: boolean;
}

export interface OpenBelowOptions {
  /** Open the file for reading and writing (never a folder). */
  write?: boolean;
  /** With `write`: make missing folders and the file itself. */
  create?: boolean;
}

/** Opens the root itself, held. */
export async function holdRoot(root: string): Promise<HeldFolder> {
  return new HeldFolder(await open(root, FOLDER_FLAGS), [], root);
}

/**
 * Opens `parts` (names below `root`, already free of `.`) without ever leaving the root: a link on the way is
 * followed only while its target stays inside, `..` never climbs above the root. The result is a regular
 * file or, for a read, a folder; anything else (a pipe, a socket, a device) is refused once opened.
 * Errors: `LeavesRootError`, ENOENT / EISDIR / ELOOP as `NodeJS.ErrnoException`, ModelBehaviorError.
 */
export async function openBelow(
  root: string,
  parts: string[],
  options: OpenBelowOptions = {},
): Promise<HeldEntry> {
  const held: HeldFolder[] = [await holdRoot(root)];
  const here = () => held[held.length - 1]!;
  const queue = clean(parts);
  let links = 0;
  // A link's target is a new path to follow: the last component it names may not be made.
  let mayCreate = options.create === true;

  /** Replaces `name` (a link in the current folder) by its target's components at the front of the queue. */
  const follow = async (name: string) => {
    if (++links > MAX_LINKS) throw errno('ELOOP', 'too many levels of symbolic links');
    const target = await readlink(here().at(name));
    if (path.isAbsolute(target)) {
      const inside = path.relative(root, target);
      if (inside === '..' || inside.startsWith(`..${path.sep}`) || path.isAbsolute(inside))
        throw new LeavesRootError('a symbolic link on the way leads outside the root');
      while (held.length > 1) await held.pop()!.close();
      queue.unshift(...clean(inside.split(path.sep)));
    } else {
      queue.unshift(...clean(target.split('/')));
    }
  };

  try {
    while (queue.length) {
      const name = queue.shift()!;
      if (name === '..') {
        if (held.length === 1) throw new LeavesRootError('the path climbs above the root');
        await held.pop()!.close();
        continue;
      }
      if (queue.length) {
        const folder = await openFolder(here(), name, mayCreate);
        if (folder === 'link') await follow(name);
        else held.push(folder);
        continue;
      }
      // The last component.
      const opened = await openLast(here(), name, options.write === true, mayCreate);
      if (opened === 'link') {
        mayCreate = false;
        await follow(name);
        if (!queue.length) break;
        continue;
      }
      const info = await opened.handle.stat();
      if (!info.isFile() && !(info.isDirectory() && !options.write)) {
        await opened.handle.close();
        throw new ModelBehaviorError('tool_input', 'not a regular file or folder');
      }
      return { handle: opened.handle, info, parts: [...here().parts, name], created: opened.created };
    }
    // The path ended on a folder already held (the root, or one reached by `..` or a link).
    if (options.write) throw errno('EISDIR', 'is a folder');
    const folder = held.pop()!;
    try {
      return { handle: folder.handle, info: await folder.handle.stat(), parts: folder.parts, created: false };
    } catch (error) {
      await folder.close();
      throw error;
    }
  } finally {
    for (const folder of held) await folder.close();
  }
}

/** Opens the folder `name` in `parent` (making it when allowed); 'link' when it is a symbolic link. */
async function openFolder(parent: HeldFolder, name: string, create: boolean): Promise<HeldFolder | 'link'> {
  for (;;) {
    try {
      const handle = await open(parent.at(name), FOLDER_FLAGS);
      return new HeldFolder(handle, [...parent.parts, name], path.join(parent.where, name));
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' && create) {
        await mkdir(parent.at(name), 0o755).catch((made) => {
          if ((made as NodeJS.ErrnoException).code !== 'EEXIST') throw made;
        });
        continue;
      }
      // O_DIRECTORY | O_NOFOLLOW says ENOTDIR for a link: look at what the name is.
      if ((code === 'ENOTDIR' || code === 'ELOOP') && (await isLink(parent, name))) return 'link';
      throw error;
    }
  }
}

async function openLast(
  parent: HeldFolder,
  name: string,
  write: boolean,
  create: boolean,
): Promise<{ handle: FileHandle; created: boolean } | 'link'> {
  try {
    if (write && create) {
      // O_EXCL: made now, or it was there (a link there included: O_EXCL never follows one).
      const made = await open(parent.at(name), WRITE_FLAGS | O_CREAT | O_EXCL, 0o644).catch((error) => {
        if ((error as NodeJS.ErrnoException).code === 'EEXIST') return undefined;
        throw error;
      });
      if (made) return { handle: made, created: true };
    }
    return { handle: await open(parent.at(name), write ? WRITE_FLAGS : READ_FLAGS), created: false };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ELOOP' && (await isLink(parent, name))) return 'link';
    throw error;
  }
}

async function isLink(parent: HeldFolder, name: string): Promise<boolean> {
  const info = await lstat(parent.at(name)).catch(() => undefined);
  return info?.isSymbolicLink() === true;
}

/**
 * At most `limit` bytes of an opened file from its start, and whether it holds more: a file that grows
 * while it is read (its owner may append to it) costs no more than the limit.
 */
export async function readAtMost(
  handle: FileHandle,
  limit: number,
): Promise<{ bytes: Buffer; more: boolean }> {
  const chunks: Buffer[] = [];
  let filled = 0;
  while (filled <= limit) {
    const chunk = Buffer.allocUnsafe(Math.min(64 * 1024, limit + 1 - filled));
    const { bytesRead } = await handle.read(chunk, 0, chunk.length, filled);
    if (bytesRead === 0) break;
    chunks.push(chunk.subarray(0, bytesRead));
    filled += bytesRead;
  }
  const bytes = Buffer.concat(chunks);
  return { bytes: bytes.subarray(0, Math.min(filled, limit)), more: filled > limit };
}

function clean(parts: string[]): string[] {
  return parts.filter((part) => part !== '' && part !== '.');
}

function errno(code: string, message: string): NodeJS.ErrnoException {
  return Object.assign(new Error(message), { code });
}
