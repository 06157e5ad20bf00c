import type { CadreTool } from '../../core/tool.ts';
import { Workspace } from './confine.ts';
import { createGlobTool } from './glob.ts';
import { createGrepTool } from './grep.ts';
import { createListDirTool } from './list-dir.ts';
import { createReadFileTool } from './read-file.ts';

export { OutsideWorkspaceError, Workspace } from './confine.ts';

/** glob, grep, read_file and list_dir, confined to one workspace root. */
export function workspaceTools(workspace: Workspace | string): CadreTool[] {
  const confined = typeof workspace === 'string' ? new Workspace(workspace) : workspace;
  return [
    createGlobTool(confined),
    createGrepTool(confined),
    createReadFileTool(confined),
    createListDirTool(confined),
  ];
}
