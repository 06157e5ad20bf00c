import { mkdirSync } from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';
import type { CadreConfig } from '../config/schema.ts';
import { Workspace } from '../tools/workspace/confine.ts';
import type { SandboxPolicy, Workspaces } from '../tools/workspace/workspaces.ts';

/** The user the CLI, a tokenless loopback server and `CADRE_TOKEN` act as: the operator. */
export const OPERATOR = 'local';

/**
 * Whose workspace a call works in (see `Workspaces`). The operator (`local`) has the folder Cadre runs
 * in (or `--workspace`). Every other user is someone the operator let in with a token: they never get
 * that folder (it holds the operator's keys and `.env`); they get `multiUser.workspaces/<user id>`, made
 * on first use and readable by no one else, or no workspace at all. Their changing tools are off unless
 * `multiUser.codingTools`, and their commands run in the sandbox with Cadre's home, the other users'
 * roots and the operator's home and folder out of reach.
 */
export function userWorkspaces(options: {
  workspace: string;
  home: string;
  config: CadreConfig['multiUser'];
}): Workspaces {
  const operator = new Workspace(options.workspace);
  const folder = options.config?.workspaces
    ? path.resolve(options.workspace, options.config.workspaces)
    : undefined;
  const roots = new Map<string, Workspace>();
  const denyRead = [
    ...new Set(
      [options.home, folder, options.workspace, operator.root, homedir(), '/root', '/home'].filter(
        (entry): entry is string => Boolean(entry),
      ),
    ),
  ];
  const sandbox: SandboxPolicy = {
    denyRead,
    allowedDomains: options.config?.sandboxAllowedDomains ?? [],
    passEnv: options.config?.sandboxEnv ?? [],
    asRoot: options.config?.sandboxAsRoot === true,
  };
  return {
    of(userId) {
      if (userId === OPERATOR) return operator;
      if (!folder) {
        return {
          none: 'this server gives its users no workspace (the operator may give each their own with multiUser.workspaces)',
        };
      }
      let root = roots.get(userId);
      if (!root) {
        // User ids are `usr_` plus base64url: never a path separator or `..`.
        if (!/^[A-Za-z0-9_-]+$/.test(userId)) return { none: 'this user has no usable workspace name' };
        const own = path.join(folder, userId);
        mkdirSync(own, { recursive: true, mode: 0o700 });
        root = new Workspace(own);
        roots.set(userId, root);
      }
      return root;
    },
    codingOff(userId) {
      if (userId === OPERATOR || options.config?.codingTools) return undefined;
      return 'the operator has not turned the coding tools on for the users of this server (multiUser.codingTools)';
    },
    sandboxFor(userId) {
      return userId === OPERATOR ? undefined : sandbox;
    },
  };
}
