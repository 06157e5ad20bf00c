import type { CadreTool } from '../../core/tool.ts';
import type { Workspace } from '../workspace/confine.ts';
import { asWorkspaces, type Workspaces } from '../workspace/workspaces.ts';
import { createBashTool } from './bash.ts';
import type { CommandSandbox } from './command-sandbox.ts';
import { createEditFileTool } from './edit-file.ts';
import { createWriteFileTool } from './write-file.ts';

export { isSecretName, scrubbedEnvironment } from './scrub-env.ts';

/** The tools that change a workspace; all of them need a person's approval unless config says otherwise. */
export const CODING_TOOL_NAMES = ['write_file', 'edit_file', 'bash'] as const;

export { type CommandSandbox, sandboxRuntime } from './command-sandbox.ts';

/** write_file, edit_file and bash, confined to the calling user's workspace root. */
export function codingTools(options: {
  workspace: Workspaces | Workspace | string;
  env: Record<string, string | undefined>;
  sandbox?: CommandSandbox;
  runningAsRoot?: () => boolean;
}): CadreTool[] {
  const workspaces = asWorkspaces(options.workspace);
  return [
    createWriteFileTool(workspaces),
    createEditFileTool(workspaces),
    createBashTool({
      workspace: workspaces,
      env: options.env,
      ...(options.sandbox ? { sandbox: options.sandbox } : {}),
      ...(options.runningAsRoot ? { runningAsRoot: options.runningAsRoot } : {}),
    }),
  ];
}
