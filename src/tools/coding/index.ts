import type { CadreTool } from '../../core/tool.ts';
import { Workspace } from '../workspace/confine.ts';
import { createBashTool } from './bash.ts';
import { createEditFileTool } from './edit-file.ts';
import { createWriteFileTool } from './write-file.ts';

export { isSecretName, scrubbedEnvironment } from './scrub-env.ts';

/** The tools that change a workspace; all of them need a person's approval unless config says otherwise. */
export const CODING_TOOL_NAMES = ['write_file', 'edit_file', 'bash'] as const;

/** write_file, edit_file and bash, confined to one workspace root. */
export function codingTools(options: {
  workspace: Workspace | string;
  env: Record<string, string | undefined>;
}): CadreTool[] {
  const workspace =
    typeof options.workspace === 'string' ? new Workspace(options.workspace) : options.workspace;
  return [
    createWriteFileTool(workspace),
    createEditFileTool(workspace),
    createBashTool({ workspace, env: options.env }),
  ];
}
