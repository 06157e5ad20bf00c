/**
 * The sandbox runtime starts `socat` bridges (Unix sockets in the temp folder, forwarding to its network
 * proxy) as children of this process. A Cadre that exits stops them (`stopSandboxRuntime`); one that is
 * SIGKILLed cannot, and they outlive it with their sockets. So once the runtime has started, the bridges'
 * pids and sockets are recorded in a file named after this process; the next start reads the files of
 * processes that are gone and stops what they left (only processes that are still such a bridge: a pid
 * reused since is left alone).
 */
import { mkdirSync, readdirSync, readFileSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

interface BridgeRecord {
  pids: number[];
  sockets: string[];
}

const BRIDGE = /^socat\0UNIX-LISTEN:(\S+?\/claude-(?:http|socks)-[0-9a-f]+\.sock),/;

function recordsFolder(): string {
  return path.join(tmpdir(), `cadre-sandbox-bridges-${process.getuid?.() ?? 'user'}`);
}

/** The command line of process `pid` (NUL-separated), or undefined when it is gone or unreadable. */
function commandLine(pid: number): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8');
  } catch {
    return undefined;
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Records the bridges this process's runtime started (its children that are such `socat` processes). */
export function recordSandboxBridges(): void {
  if (process.platform !== 'linux') return;
  const pids: number[] = [];
  const sockets: string[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const pid = Number(entry);
    const status = (() => {
      try {
        return readFileSync(`/proc/${pid}/status`, 'utf8');
      } catch {
        return '';
      }
    })();
    if (Number(/^PPid:\s+(\d+)/m.exec(status)?.[1]) !== process.pid) continue;
    const socket = BRIDGE.exec(commandLine(pid) ?? '')?.[1];
    if (!socket) continue;
    pids.push(pid);
    sockets.push(socket);
  }
  if (!pids.length) return;
  mkdirSync(recordsFolder(), { recursive: true, mode: 0o700 });
  writeFileSync(path.join(recordsFolder(), `${process.pid}.json`), JSON.stringify({ pids, sockets }));
}

/** Forgets this process's record (its runtime stopped its bridges itself). */
export function forgetSandboxBridges(): void {
  rmSync(path.join(recordsFolder(), `${process.pid}.json`), { force: true });
}

/** Stops the bridges, and removes the sockets, that Cadre processes now gone left behind. */
export function stopStaleSandboxBridges(): number {
  if (process.platform !== 'linux') return 0;
  let stopped = 0;
  let files: string[];
  try {
    files = readdirSync(recordsFolder());
  } catch {
    return 0;
  }
  for (const file of files) {
    const owner = Number(/^(\d+)\.json$/.exec(file)?.[1]);
    if (!owner || owner === process.pid || alive(owner)) continue;
    const recordFile = path.join(recordsFolder(), file);
    let record: BridgeRecord;
    try {
      record = JSON.parse(readFileSync(recordFile, 'utf8')) as BridgeRecord;
    } catch {
      rmSync(recordFile, { force: true });
      continue;
    }
    for (const [index, pid] of record.pids.entries()) {
      // Only the same bridge: same program, same socket (a pid reused since is someone else's).
      const socket = BRIDGE.exec(commandLine(pid) ?? '')?.[1];
      if (socket !== undefined && socket === record.sockets[index]) {
        try {
          process.kill(pid, 'SIGTERM');
          stopped++;
        } catch {
          // Gone meanwhile.
        }
      }
    }
    for (const socket of record.sockets) {
      try {
        unlinkSync(socket);
      } catch {
        // Already gone.
      }
    }
    rmSync(recordFile, { force: true });
  }
  return stopped;
}
