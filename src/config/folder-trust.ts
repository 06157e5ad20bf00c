import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, realpathSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { z } from 'zod';
import { UserError } from '../core/errors.ts';
import { readJsonFile } from './read-json-file.ts';

/**
 * A folder Cadre runs in may be a stranger's repository. Its own `.cadre/config.json` and `.mcp.json`
 * may name commands (MCP servers, language servers) and URLs that tools would send data to; Cadre uses
 * them only after the person trusts the folder with `cadre mcp trust`. Trust is recorded in
 * `$CADRE_HOME/trusted-folders.json` with a digest of what the folder asked for, so a later change to
 * those commands (a `git pull`) is refused again until trusted again.
 */
const trustFileSchema = z.object({
  folders: z.record(z.string(), z.object({ digest: z.string(), trustedAt: z.string() })).default({}),
});
type TrustFile = z.infer<typeof trustFileSchema>;

/** What a project folder asks Cadre to start or reach, as read from its files (before any expansion). */
export interface ProjectRequests {
  /** `mcpServers` of `./.mcp.json`, raw. */
  mcpJson?: unknown;
  /** `mcpServers` of `./.cadre/config.json`. */
  configServers?: unknown;
  /** `tools.lsp.servers` of `./.cadre/config.json`. */
  lspServers?: unknown;
}

export type FolderTrust = 'trusted' | 'untrusted' | 'changed';

export function trustFilePath(home: string): string {
  return join(home, 'trusted-folders.json');
}

/** The digest trust is pinned to: the folder's requests, canonically serialised. */
export function requestsDigest(requests: ProjectRequests): string {
  const canonical = JSON.stringify([
    requests.mcpJson ?? null,
    requests.configServers ?? null,
    requests.lspServers ?? null,
  ]);
  return createHash('sha256').update(canonical).digest('hex');
}

/** Whether `folder` is trusted for exactly these requests. */
export function folderTrust(home: string, folder: string, requests: ProjectRequests): FolderTrust {
  const entry = readTrustFile(home).folders[canonicalFolder(folder)];
  if (!entry) return 'untrusted';
  return entry.digest === requestsDigest(requests) ? 'trusted' : 'changed';
}

/** Records `folder` as trusted for its current requests. */
export function trustFolder(
  home: string,
  folder: string,
  requests: ProjectRequests,
  now = new Date(),
): string {
  const file = readTrustFile(home);
  const key = canonicalFolder(folder);
  file.folders[key] = { digest: requestsDigest(requests), trustedAt: now.toISOString() };
  writeTrustFile(home, file);
  return key;
}

/** Forgets `folder`; returns whether it was trusted. */
export function untrustFolder(home: string, folder: string): boolean {
  const file = readTrustFile(home);
  const key = canonicalFolder(folder);
  if (!file.folders[key]) return false;
  delete file.folders[key];
  writeTrustFile(home, file);
  return true;
}

/** Real path, so a symlink or `..` cannot stand in for a trusted folder. */
function canonicalFolder(folder: string): string {
  const absolute = resolve(folder);
  return existsSync(absolute) ? realpathSync(absolute) : absolute;
}

function readTrustFile(home: string): TrustFile {
  const path = trustFilePath(home);
  if (!existsSync(path)) return { folders: {} };
  const parsed = trustFileSchema.safeParse(readJsonFile(path));
  if (!parsed.success)
    throw new UserError('config_invalid', `${path}: expected {"folders": {PATH: {digest, trustedAt}}}.`, {
      file: path,
    });
  return parsed.data;
}

function writeTrustFile(home: string, file: TrustFile): void {
  const path = trustFilePath(home);
  mkdirSync(dirname(path), { recursive: true });
  const temporary = `${path}.${process.pid}.tmp`;
  writeFileSync(temporary, `${JSON.stringify(file, null, 2)}\n`, { mode: 0o600 });
  renameSync(temporary, path);
}
