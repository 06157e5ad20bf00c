import type { CadreTool, ToolUnavailable } from './tool.ts';

/** All tools Cadre knows, by name. Allow-lists resolve against it, in code. */
export class ToolRegistry {
  #tools = new Map<string, CadreTool>();

  constructor(tools: Iterable<CadreTool> = []) {
    for (const tool of tools) this.register(tool);
  }

  register(tool: CadreTool): this {
    if (this.#tools.has(tool.name)) throw new Error(`tool "${tool.name}" is registered twice`);
    this.#tools.set(tool.name, tool);
    return this;
  }

  get(name: string): CadreTool | undefined {
    return this.#tools.get(name);
  }

  has(name: string): boolean {
    return this.#tools.has(name);
  }

  list(): CadreTool[] {
    return [...this.#tools.values()];
  }

  /** Why a registered tool is not offered now, or undefined when it is. */
  unavailable(name: string): ToolUnavailable | undefined {
    const tool = this.#tools.get(name);
    if (!tool) return { reason: `no tool named "${name}"` };
    return tool.unavailable?.();
  }
}
