/**
 * Trusting a project folder to start what its own files name (MCP servers, language servers): the CLI's
 * `cadre mcp trust` / `untrust` reach it here, as every front door reaches configuration through app/.
 */
import type { ProjectRequests } from '../config/folder-trust.ts';
import { trustFolder, untrustFolder } from '../config/folder-trust.ts';
import { cadreHome, loadConfig } from '../config/load-config.ts';
import { CadreError, UserError } from '../core/errors.ts';

export { trustFolder, untrustFolder };

/**
 * Trusts `folder` for `requests` only if its files, read as trusted, are a valid configuration. Untrusted,
 * a project's `.mcp.json` is not validated (it is not used); trusting one that does not validate would
 * make every command in the folder fail on it, so it is refused with the reason and nothing is recorded.
 */
export function trustFolderIfValid(
  env: Record<string, string | undefined>,
  folder: string,
  requests: ProjectRequests,
): string {
  const home = cadreHome(env);
  const recorded = trustFolder(home, folder, requests);
  try {
    loadConfig({ env, cwd: folder });
  } catch (error) {
    untrustFolder(home, folder);
    if (!(CadreError.isInstance(error) && error.fault === 'user')) throw error;
    throw new UserError(
      'project_config_invalid',
      `${folder} was not trusted: ${error.message}. Fix the file, then run "cadre mcp trust" again.`,
      { folder },
    );
  }
  return recorded;
}

/** Forgets `folder` without reading its files: a folder whose files do not validate can still be untrusted. */
export function untrustFolderOf(env: Record<string, string | undefined>, folder: string): boolean {
  return untrustFolder(cadreHome(env), folder);
}
