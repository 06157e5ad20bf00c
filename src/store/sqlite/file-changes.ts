import { type FSWatcher, watch } from 'node:fs';
import { basename, dirname } from 'node:path';

interface Folder {
  watcher: FSWatcher;
  /** Listeners by file name; `null` names (the platform did not say which file) reach every listener. */
  byName: Map<string, Set<() => void>>;
}

const folders = new Map<string, Folder>();

/**
 * Calls `listener` whenever the file at `path` changes, in this process or another (the operating system
 * reports it: inotify, FSEvents), with no timer. One watcher per folder serves every file watched in it,
 * and it keeps no process alive. Returns how to stop listening; the watcher closes with its last listener.
 */
export function onFileChange(path: string, listener: () => void): () => void {
  const folderPath = dirname(path);
  const name = basename(path);
  let folder = folders.get(folderPath);
  if (!folder) {
    const byName = new Map<string, Set<() => void>>();
    const watcher = watch(folderPath, { persistent: false }, (_type, changed) => {
      const reached = changed === null ? [...byName.values()] : [byName.get(String(changed))];
      for (const listeners of reached) for (const each of listeners ?? []) each();
    });
    // A folder that went away (a test's temporary home) ends its watch; nothing to report to anyone.
    watcher.on('error', () => {});
    folder = { watcher, byName };
    folders.set(folderPath, folder);
  }
  let listeners = folder.byName.get(name);
  if (!listeners) {
    listeners = new Set();
    folder.byName.set(name, listeners);
  }
  const own = () => listener();
  listeners.add(own);
  const watched = folder;
  return () => {
    const named = watched.byName.get(name);
    if (!named?.delete(own)) return;
    if (!named.size) watched.byName.delete(name);
    if (watched.byName.size) return;
    watched.watcher.close();
    if (folders.get(folderPath) === watched) folders.delete(folderPath);
  };
}
