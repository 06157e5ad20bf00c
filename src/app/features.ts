import type { PrepareAgent } from '../core/run-agent.ts';
import type { ToolRegistry } from '../core/tool-registry.ts';
import {
  documentContextProvider,
  documentsInstructionFragment,
  hasDocuments,
} from '../documents/agent-context.ts';
import type { Database } from '../store/database.ts';

/** What a feature needs to decide whether it is on and relevant for one request. */
export interface FeatureContext {
  db: Database;
  userId: string;
  workspace: string;
  tools: ToolRegistry;
}

/** Agents and main's direct tools that only make sense when the user has documents. */
const DOCUMENT_FEATURES = ['docqa', 'analyze_document', 'search_documents', 'query_documents'];

/**
 * Instruction fragments for the main agent from features that are on and relevant now, and the agents
 * that are not relevant (left out of main's tools and prompt). Each feature contributes here.
 */
export function instructionFragments(context: FeatureContext): {
  text: string[];
  irrelevant: Set<string>;
} {
  const text: string[] = [];
  const irrelevant = new Set<string>();
  if (hasDocuments(context.db, context.userId)) {
    const fragment = documentsInstructionFragment(context.db, context.userId);
    if (fragment) text.push(fragment);
  } else {
    for (const name of DOCUMENT_FEATURES) irrelevant.add(name);
  }
  return { text, irrelevant };
}

/** Per-agent preparers (e.g. loading a document into analyze_document's context). */
export function preparers(context: FeatureContext): PrepareAgent[] {
  return [documentContextProvider(context.db)];
}
