/**
 * Trusting a project folder to start what its own files name (MCP servers, language servers): the CLI's
 * `cadre mcp trust` / `untrust` reach it here, as every front door reaches configuration through app/.
 */
export { trustFolder, untrustFolder } from '../config/folder-trust.ts';
