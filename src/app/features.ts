import type { PrepareAgent } from '../core/run-agent.ts';
import type { ToolRegistry } from '../core/tool-registry.ts';
import {
  documentContextProvider,
  documentsInstructionFragment,
  hasDocuments,
} from '../documents/agent-context.ts';
import type { DocumentStore } from '../documents/document-store.ts';
import { Workspace } from '../tools/workspace/confine.ts';
import type { Workspaces } from '../tools/workspace/workspaces.ts';
import { OPERATOR } from './user-workspaces.ts';

/** What a feature needs to decide whether it is on and relevant for one request. */
export interface FeatureContext {
  documents: DocumentStore;
  userId: string;
  workspace: string;
  /** True when the person named a workspace (`--workspace`), so main may read it itself. */
  workspaceGiven: boolean;
  /** Each user's root, and whether their coding tools are on (a shared server's users). */
  workspaces: Workspaces;
  tools: ToolRegistry;
  /** Delegation is off for this person: fragments name no sub-agent. */
  delegationOff?: boolean;
}

/** Agents and main's direct tools that only make sense when the user has documents. */
const DOCUMENT_FEATURES = ['docqa', 'analyze_document', 'search_documents', 'query_documents'];
/** Document tools that can do nothing without documents, taken from every agent's list then. */
const DOCUMENT_TOOLS = ['search_documents', 'query_documents', 'read_document'];
/** Main's own code tools, offered when the person named a workspace (seed 004's core tools). */
const WORKSPACE_FEATURES = [
  'read_file',
  'glob',
  'grep',
  'lsp_diagnostics',
  'lsp_definition',
  'lsp_references',
  'lsp_hover',
  'lsp_completions',
  'docs_lookup',
  // Changing the workspace: each call asks the person first unless config approvals allow it.
  'write_file',
  'edit_file',
  'bash',
];

const CODING_TOOLS = ['write_file', 'edit_file', 'bash'];
const LSP_TOOLS = WORKSPACE_FEATURES.filter((name) => name.startsWith('lsp_'));

/**
 * Instruction fragments for the main agent from features that are on and relevant now, and the agents
 * that are not relevant (left out of main's tools and prompt). Each feature contributes here.
 */
export async function instructionFragments(context: FeatureContext): Promise<{
  text: string[];
  irrelevant: Set<string>;
  idleTools: Set<string>;
}> {
  const text: string[] = [];
  const irrelevant = new Set<string>();
  const idleTools = new Set<string>();
  if (await hasDocuments(context.documents, context.userId)) {
    const fragment = await documentsInstructionFragment(
      context.documents,
      context.userId,
      undefined,
      !context.delegationOff,
    );
    if (fragment) text.push(fragment);
  } else {
    for (const name of DOCUMENT_FEATURES) irrelevant.add(name);
    for (const name of DOCUMENT_TOOLS) idleTools.add(name);
  }
  const own = context.workspaces.of(context.userId);
  if (!(own instanceof Workspace)) {
    // A shared server's user without a root: nothing of a workspace is offered, explorer included.
    for (const name of [...WORKSPACE_FEATURES, 'explorer', 'list_dir']) irrelevant.add(name);
  } else if (context.userId === OPERATOR && !context.workspaceGiven) {
    for (const name of WORKSPACE_FEATURES) irrelevant.add(name);
  }
  if (context.workspaces.codingOff(context.userId)) for (const name of CODING_TOOLS) irrelevant.add(name);
  // Language servers run outside any sandbox: the operator's alone.
  if (context.workspaces.sandboxFor(context.userId)) for (const name of LSP_TOOLS) irrelevant.add(name);
  // A tool without its key is not offered; main's guidance must not name it either.
  for (const tool of context.tools.list()) if (tool.unavailable?.()) irrelevant.add(tool.name);
  return { text, irrelevant, idleTools };
}

/** Per-agent preparers (e.g. loading a document into analyze_document's context). */
export function preparers(context: Pick<FeatureContext, 'documents' | 'userId'>): PrepareAgent[] {
  return [documentContextProvider(context.documents)];
}
