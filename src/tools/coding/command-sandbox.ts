/**
 * Commands of a shared server's users run inside Anthropic's sandbox runtime (`@anthropic-ai/sandbox-runtime`:
 * bubblewrap, a fresh PID and network namespace and a filtering proxy on Linux, Seatbelt on macOS), not a
 * home-made one. Each command reads only the system's programs, libraries and configuration (`/usr`,
 * `/bin`, `/lib*`, `/etc` without its secrets) and its user's root, writes only to that root and a
 * private `/tmp`, sees no host process, and reaches only the hosts the operator listed (none by
 * default). The paths its policy denies (Cadre's home, the other users' roots, the operator's home and
 * working folder) stay denied even where they lie inside that view.
 */
import { randomBytes } from 'node:crypto';
import { realpathSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { SystemError } from '../../core/errors.ts';
import type { SandboxPolicy } from '../workspace/workspaces.ts';
import { forgetSandboxBridges, recordSandboxBridges, stopStaleSandboxBridges } from './sandbox-bridges.ts';

/** What a sandboxed command may read of the system: programs, libraries and configuration. */
export const SYSTEM_VIEW = ['/usr', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32', '/etc'];

/** Files of /etc that stay hidden inside the system view: password hashes, sudo rules, host keys. */
export const SYSTEM_SECRETS = [
  '/etc/shadow',
  '/etc/shadow-',
  '/etc/gshadow',
  '/etc/gshadow-',
  '/etc/sudoers',
  '/etc/sudoers.d',
  '/etc/ssh',
  '/etc/ssl/private',
  '/etc/security/opasswd',
];

/** Turns one command into the command line that runs it sandboxed, or says why it cannot. */
export interface CommandSandbox {
  /** Why commands cannot be sandboxed on this machine, or undefined when they can (checked once). */
  problem(): Promise<string | undefined>;
  /** The shell command line that runs `command` in `root` under `policy`; `release` once it has ended. */
  wrap(command: string, root: string, policy: SandboxPolicy): Promise<{ line: string; release(): void }>;
}

type Runtime = typeof import('@anthropic-ai/sandbox-runtime');

/**
 * The runtime's manager is one per process: it is started once, with no host allowed, and each command
 * brings its policy's hosts as a list of its own (`registerCommandNetworkLists`), held while it runs.
 */
let started: Promise<{ runtime: Runtime; seccomp: string } | { problem: string }> | undefined;

function start() {
  started ??= (async () => {
    try {
      const runtime = await import('@anthropic-ai/sandbox-runtime');
      const manager = runtime.SandboxManager;
      if (!manager.isSupportedPlatform())
        return { problem: `this platform (${process.platform}) is not supported` };
      const missing = manager.checkDependencies().errors;
      if (missing.length) return { problem: missing.join('; ') };
      // What a SIGKILLed Cadre's runtime left running is stopped before this one starts its own.
      stopStaleSandboxBridges();
      await manager.initialize({
        network: { allowedDomains: [], deniedDomains: [] },
        filesystem: { denyRead: [], allowRead: [], allowWrite: [], denyWrite: [] },
      });
      recordSandboxBridges();
      // The runtime's seccomp helper runs inside the sandbox: it must stay readable whatever is denied.
      const entry = fileURLToPath(import.meta.resolve('@anthropic-ai/sandbox-runtime'));
      const seccomp = realpathSync(path.join(path.dirname(entry), '..', 'vendor', 'seccomp'));
      return { runtime, seccomp };
    } catch (error) {
      return { problem: error instanceof Error ? error.message : String(error) };
    }
  })();
  return started;
}

/**
 * Stops what the sandbox runtime started in this process (its network bridges, `socat` processes that
 * would otherwise outlive it), when it was started; for a process closing down.
 */
export async function stopSandboxRuntime(): Promise<void> {
  const ready = await started;
  if (!ready || 'problem' in ready) return;
  started = undefined;
  await ready.runtime.SandboxManager.reset().catch(() => {});
  forgetSandboxBridges();
}

/** Anthropic's sandbox runtime, started on first use. */
export function sandboxRuntime(): CommandSandbox {
  return {
    async problem() {
      const ready = await start();
      return 'problem' in ready ? ready.problem : undefined;
    },
    async wrap(command, root, policy) {
      const ready = await start();
      if ('problem' in ready) throw new SystemError('sandbox_unavailable', ready.problem);
      const manager = ready.runtime.SandboxManager;
      // Unguessable, as the runtime requires: the id is what binds a connection to this command's hosts.
      const commandId = randomBytes(16).toString('base64url');
      const line = await manager.wrapWithSandbox(
        command,
        '/bin/bash',
        {
          // Deny by default: '/' is hidden (its folders become empty, /tmp a private one), and only the
          // system's read-only view, the user's root and the runtime's own helper are put back.
          filesystem: {
            denyRead: ['/', ...SYSTEM_SECRETS, ...policy.denyRead],
            allowRead: [...SYSTEM_VIEW, root, ready.seccomp],
            allowWrite: [root],
            denyWrite: [],
          },
          network: { allowedDomains: [], deniedDomains: [] },
        },
        undefined,
        { commandId },
      );
      if (policy.allowedDomains.length)
        manager.registerCommandNetworkLists(commandId, { allowedDomains: policy.allowedDomains });
      return { line, release: () => manager.unregisterCommandNetworkLists(commandId) };
    },
  };
}
