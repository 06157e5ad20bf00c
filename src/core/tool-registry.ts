import { UserError } from './errors.ts';
import type { CadreTool, ToolUnavailable } from './tool.ts';

/**
 * Tools that come from outside Cadre and are known only once something is started (MCP servers). The
 * registry asks a source after its own tools; a source answers synchronously from what it already knows.
 */
export interface ToolSource {
  /** Whether `name` could be one of this source's tools (e.g. `mcp__<configured server>__x`). */
  claims(name: string): boolean;
  get(name: string): CadreTool | undefined;
  /** The tools known now whose names start with `prefix`. */
  list(prefix?: string): CadreTool[];
}

/** All tools Cadre knows, by name. Allow-lists resolve against it, in code. */
export class ToolRegistry {
  #tools = new Map<string, CadreTool>();
  #sources: ToolSource[] = [];

  constructor(tools: Iterable<CadreTool> = []) {
    for (const tool of tools) this.register(tool);
  }

  register(tool: CadreTool): this {
    if (this.#tools.has(tool.name))
      throw new UserError('tool_duplicate', `tool "${tool.name}" is registered twice`);
    this.#tools.set(tool.name, tool);
    return this;
  }

  /** Adds a source of tools discovered at run time. */
  addSource(source: ToolSource): this {
    this.#sources.push(source);
    return this;
  }

  get(name: string): CadreTool | undefined {
    const own = this.#tools.get(name);
    if (own) return own;
    for (const source of this.#sources) {
      const found = source.claims(name) ? source.get(name) : undefined;
      if (found) return found;
    }
    return undefined;
  }

  /** True for registered tools and for names a source claims (checked when its tools are known). */
  has(name: string): boolean {
    if (name === ALL_TOOLS) return true;
    return this.#tools.has(name) || this.#sources.some((source) => source.claims(name));
  }

  list(): CadreTool[] {
    return [...this.#tools.values(), ...this.#sources.flatMap((source) => source.list())];
  }

  /**
   * The tool names an allow-list entry stands for: itself, or for `prefix*` (e.g. `mcp__github__*`)
   * every tool known now whose name starts with `prefix` (`*` alone: every tool).
   */
  expand(entry: string): string[] {
    if (!isPattern(entry)) return [entry];
    const prefix = entry.slice(0, -1);
    const own = [...this.#tools.values()]
      .filter((tool) => tool.name.startsWith(prefix) && !tool.explicitOnly)
      .map((tool) => tool.name);
    const sourced = this.#sources.flatMap((source) => source.list(prefix).map((tool) => tool.name));
    return [...new Set([...own, ...sourced])];
  }

  /** Why a registered tool is not offered now, or undefined when it is. */
  unavailable(name: string): ToolUnavailable | undefined {
    const tool = this.get(name);
    if (!tool) return { reason: `no tool named "${name}"` };
    return tool.unavailable?.();
  }
}

/**
 * The allow-list entry for every tool there is (seed 001's planner: "all enabled tools"), MCP servers' tools
 * included; tools marked `explicitOnly` (writing, shell, the planner's own checklist) must still be named.
 */
export const ALL_TOOLS = '*';

/** An allow-list entry ending in `*` names every tool with that prefix. */
export function isPattern(entry: string): boolean {
  return entry.endsWith('*');
}
