import type { PrepareAgent } from '../core/run-agent.ts';
import type { ToolRegistry } from '../core/tool-registry.ts';
import type { Database } from '../store/database.ts';

/** What a feature needs to decide whether it is on and relevant for one request. */
export interface FeatureContext {
  db: Database;
  userId: string;
  workspace: string;
  tools: ToolRegistry;
}

/**
 * Instruction fragments for the main agent from features that are on and relevant now, and the agents
 * that are not relevant (left out of main's tools and prompt). Each feature room contributes here.
 */
export function instructionFragments(_context: FeatureContext): {
  text: string[];
  irrelevantAgents: Set<string>;
} {
  return { text: [], irrelevantAgents: new Set() };
}

/** Per-agent preparers (e.g. loading a document into analyze_document's context). */
export function preparers(_context: FeatureContext): PrepareAgent[] {
  return [];
}
