import { lstat } from 'node:fs/promises';
import { z } from 'zod';
import { defineTool } from '../../core/tool.ts';
import type { Workspace } from './confine.ts';
import { outsideScope, runScope } from './run-scope.ts';
import { isPathIgnored } from './walk.ts';
import { asWorkspaces, type Workspaces, workspaceOf } from './workspaces.ts';

const MAX_ENTRIES = 500;

/** `list_dir {path}`: one folder's entries, folders first. */
export function createListDirTool(source: Workspaces | Workspace | string) {
  const workspaces = asWorkspaces(source);
  return defineTool({
    name: 'list_dir',
    family: 'workspace',
    description:
      'List the entries of a workspace folder ("." for the root): name, type (file, dir, link) and size. ' +
      'Entries ignored by .gitignore are marked ignored.',
    input: z.object({
      path: z.string().max(1000).describe('Folder relative to the workspace root, "." for the root'),
    }),
    async execute({ path }, context) {
      const workspace = workspaceOf(workspaces, context);
      const folder = await workspace.holdFolder(path);
      const entries: Array<{ name: string; type: 'file' | 'dir' | 'link'; size?: number; ignored?: true }> =
        [];
      try {
        const scope = runScope(context);
        if (scope.scope && !scope.includesFolder(folder.relative)) throw outsideScope(path, scope.scope);
        for (const dirent of await folder.entries()) {
          if (dirent.name === '.git') continue;
          const relative = folder.relative === '.' ? dirent.name : `${folder.relative}/${dirent.name}`;
          let type: 'file' | 'dir' | 'link' = dirent.isDirectory() ? 'dir' : 'file';
          let size: number | undefined;
          if (dirent.isSymbolicLink()) {
            type = 'link';
            // A link is shown, but its size (which would read the target) only when the target is inside.
            const target = await workspace.open(relative).catch(() => undefined);
            if (target) {
              if (target.info.isFile()) size = target.info.size;
              await target.handle.close();
            }
          } else if (type === 'file') {
            // lstat from the held folder: never follows a link put in the entry's place meanwhile.
            size = (await lstat(folder.at(dirent.name)).catch(() => undefined))?.size;
          }
          const ignored = await isPathIgnored(workspace, relative, type === 'dir');
          entries.push({
            name: dirent.name,
            type,
            ...(size !== undefined ? { size } : {}),
            ...(ignored ? { ignored: true as const } : {}),
          });
        }
      } finally {
        await folder.close();
      }
      entries.sort((a, b) =>
        (a.type === 'dir') === (b.type === 'dir') ? a.name.localeCompare(b.name) : a.type === 'dir' ? -1 : 1,
      );
      const shown = entries.slice(0, MAX_ENTRIES);
      return {
        path: folder.relative,
        entries: shown,
        ...(entries.length > shown.length ? { truncated: entries.length - shown.length } : {}),
      };
    },
  });
}
