/**
 * Claude Code sub-agent files (`.claude/agents/*.md`) load as they are: their tool names are mapped to
 * Cadre's, and whatever has no counterpart is reported, not silently dropped.
 */
const TOOL_NAMES: Record<string, string> = {
  Read: 'read_file',
  Grep: 'grep',
  Glob: 'glob',
  LS: 'list_dir',
  WebSearch: 'web_search',
  WebFetch: 'web_fetch',
};

/** Fields Claude Code files may carry that have no meaning in Cadre. */
const IGNORED_FIELDS = new Set([
  'color',
  'permissionMode',
  'skills',
  'hooks',
  'mcpServers',
  'disallowedTools',
]);

/** Claude Code's model aliases mean "a Claude model"; Cadre maps them to the parent's model. */
const MODEL_ALIASES = new Set(['sonnet', 'opus', 'haiku', 'inherit']);

export interface MappedClaudeAgent {
  attributes: Record<string, unknown>;
  notes: string[];
}

export function mapClaudeCodeAgent(attributes: Record<string, unknown>): MappedClaudeAgent {
  const notes: string[] = [];
  const mapped: Record<string, unknown> = {};
  for (const [field, value] of Object.entries(attributes)) {
    if (IGNORED_FIELDS.has(field)) {
      notes.push(`field "${field}" has no meaning in Cadre and is ignored`);
      continue;
    }
    mapped[field] = value;
  }
  if (mapped.tools !== undefined) {
    const names = Array.isArray(mapped.tools)
      ? mapped.tools.map(String)
      : String(mapped.tools)
          .split(',')
          .map((name) => name.trim())
          .filter(Boolean);
    const tools: string[] = [];
    for (const name of names) {
      const cadreName = TOOL_NAMES[name];
      if (cadreName) tools.push(cadreName);
      else if (/^[a-z][a-z0-9_]*$/.test(name) || name.startsWith('mcp__')) tools.push(name);
      else notes.push(`tool "${name}" has no Cadre counterpart and was left out`);
    }
    mapped.tools = [...new Set(tools)];
  }
  if (typeof mapped.model === 'string' && MODEL_ALIASES.has(mapped.model)) {
    if (mapped.model !== 'inherit')
      notes.push(`model "${mapped.model}" is a Claude alias; using the parent's model`);
    mapped.model = 'inherit';
  }
  return { attributes: mapped, notes };
}
