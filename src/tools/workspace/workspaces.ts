import type { ResolvedSubject } from '../../core/approval-rules.ts';
import { UserError } from '../../core/errors.ts';
import type { ToolContext } from '../../core/tool.ts';
import { Workspace } from './confine.ts';

/**
 * How `bash` runs for a user of a shared server: inside the sandbox, writing only to their own root,
 * reading nothing of the paths listed, reaching only the hosts listed.
 */
export interface SandboxPolicy {
  /** Folders the command may not read (Cadre's home, the other users' roots, the operator's home...). */
  denyRead: string[];
  /** Hosts (`example.com`, `*.npmjs.org`, `host:port`) the command may reach; none by default. */
  allowedDomains: string[];
  /** Names of the server's environment variables the command gets besides PATH, the locale, TERM and TZ. */
  passEnv: string[];
  /**
   * The operator's explicit word that users' commands may run while the server runs as root (inside the
   * sandbox, but as root there too: one kernel or runtime flaw from the whole machine). Refused otherwise.
   */
  asRoot: boolean;
}

/**
 * Whose workspace a call works in. The CLI and a single-user server have one root for everyone; a server
 * that several people share gives each user their own root or none, keeps the changing tools off unless
 * the operator turned them on, and runs each user's commands in a sandbox.
 */
export interface Workspaces {
  /** The root `userId`'s calls are confined to, or why they have none. */
  of(userId: string): Workspace | { none: string };
  /** Why write_file, edit_file and bash are off for `userId`, or undefined when they are on. */
  codingOff(userId: string): string | undefined;
  /** The sandbox `userId`'s commands must run in; undefined runs them directly (the operator's own). */
  sandboxFor(userId: string): SandboxPolicy | undefined;
}

/** One root for every caller: the CLI, tests, a server with no other users. */
export function oneWorkspace(root: Workspace | string): Workspaces {
  const workspace = typeof root === 'string' ? new Workspace(root) : root;
  return { of: () => workspace, codingOff: () => undefined, sandboxFor: () => undefined };
}

/** Accepts a root (path or Workspace) where tools were given one, or the per-user form. */
export function asWorkspaces(source: Workspaces | Workspace | string): Workspaces {
  return typeof source === 'string' || source instanceof Workspace ? oneWorkspace(source) : source;
}

/** The calling user's root; a user without one gets an error that says why, and nothing is touched. */
export function workspaceOf(workspaces: Workspaces, context: Pick<ToolContext, 'userId'>): Workspace {
  const found = workspaces.of(context.userId);
  if (found instanceof Workspace) return found;
  throw new UserError('no_workspace', found.none, {});
}

/** Refuses a changing tool (write_file, edit_file, bash) for a user it is off for. */
export function codingAllowed(
  workspaces: Workspaces,
  context: Pick<ToolContext, 'userId'>,
  tool: string,
): void {
  const off = workspaces.codingOff(context.userId);
  if (off) throw new UserError('coding_tools_off', `${tool} is off here: ${off}`, { tool });
}

/** Where a path really is for `userId` (see `Workspace.locate`), or null when it cannot be said. */
export async function locatePath(
  workspaces: Workspaces,
  context: Pick<ToolContext, 'userId'>,
  requested: unknown,
): Promise<ResolvedSubject | null> {
  if (typeof requested !== 'string') return null;
  const found = workspaces.of(context.userId);
  if (!(found instanceof Workspace)) return null;
  const located = await found.locate(requested).catch(() => null);
  return located === null ? null : { subjects: [located] };
}
