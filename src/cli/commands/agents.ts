import { parseArgs } from 'node:util';
import { type AgentSourceKind, loadAgentFile } from '../../agents/loader.ts';
import { agentModelChoice } from '../../app/agent-model.ts';
import { Cadre } from '../../app/create-cadre.ts';
import { UserError } from '../../core/errors.ts';
import { serverOf } from '../../mcp/client/mcp-clients.ts';
import type { CliCommand, CliContext } from '../cli-context.ts';
import { EXIT } from '../errors.ts';

/** `cadre agents list|show NAME|check [FILE...]` */
export const agentsCommand: CliCommand = async (args, context) => {
  const [sub, ...rest] = args;
  const { values, positionals } = parseArgs({
    args: rest,
    allowPositionals: true,
    options: { json: { type: 'boolean', default: false }, config: { type: 'string' } },
  });
  const cadre = new Cadre({
    env: context.env,
    cwd: context.cwd,
    db: context.db(),
    ...(values.config ? { configFile: values.config } : {}),
  });
  try {
    switch (sub) {
      case 'list':
      case undefined:
        return list(cadre, context, values.json);
      case 'show':
        return await show(cadre, context, positionals[0], values.json);
      case 'check':
        return check(cadre, context, positionals, values.json);
      default:
        throw new UserError(
          'usage',
          `unknown agents command "${sub}"; use list, show NAME or check [FILE...]`,
        );
    }
  } finally {
    cadre.close();
    await cadre.mcp.close();
  }
};

function list(cadre: Cadre, context: CliContext, json: boolean): number {
  const agents = cadre.runtime().options.agents;
  const rows = [...cadre.catalog.agents.values()].map((loaded) => {
    const definition = agents.get(loaded.definition.name) ?? loaded.definition;
    return {
      name: definition.name,
      enabled: definition.enabled,
      description: definition.description,
      source: loaded.source.kind,
      path: loaded.source.path,
      ...(loaded.overrides ? { overrides: loaded.overrides.path } : {}),
      notes: loaded.notes,
    };
  });
  if (json) {
    context.stdout.write(`${JSON.stringify({ agents: rows, problems: cadre.catalog.problems }, null, 2)}\n`);
    return EXIT.ok;
  }
  const width = Math.max(...rows.map((row) => row.name.length), 4);
  for (const row of rows) {
    const state = row.enabled ? '' : ' (disabled)';
    context.stdout.write(`${row.name.padEnd(width)}  ${row.source.padEnd(7)}  ${row.description}${state}\n`);
    context.stdout.write(
      `${''.padEnd(width)}  ${''.padEnd(7)}  ${row.path}${row.overrides ? ` (overrides ${row.overrides})` : ''}\n`,
    );
    for (const note of row.notes)
      context.stdout.write(`${''.padEnd(width)}  ${''.padEnd(7)}  note: ${note}\n`);
  }
  for (const problem of cadre.catalog.problems) context.stderr.write(`problem: ${problem.message}\n`);
  return EXIT.ok;
}

async function show(
  cadre: Cadre,
  context: CliContext,
  name: string | undefined,
  json: boolean,
): Promise<number> {
  if (!name) throw new UserError('usage', 'usage: cadre agents show NAME');
  const loaded = cadre.catalog.agents.get(name);
  const runtime = cadre.runtime();
  const definition = runtime.options.agents.get(name);
  if (!loaded || !definition) {
    throw new UserError(
      'unknown_agent',
      `There is no agent named "${name}". Known: ${[...cadre.catalog.agents.keys()].join(', ')}.`,
    );
  }
  // The agent's MCP servers start here, as they would for its first run, so their tools can be listed.
  await cadre.mcp.prepare(definition.tools);
  const tools = definition.tools.flatMap(mcpEntries(cadre)).map((tool) => {
    if (cadre.catalog.agents.has(tool)) return { name: tool, kind: 'agent', available: true };
    const server = serverOf(tool);
    const failed = server ? cadre.mcp.server(server)?.lastError : undefined;
    if (server) {
      return failed
        ? { name: tool, kind: 'mcp', available: false, reason: `MCP server "${server}" ${failed}` }
        : { name: tool, kind: 'mcp', available: true };
    }
    const unavailable = cadre.tools.unavailable(tool);
    return {
      name: tool,
      kind: 'tool',
      available: !unavailable,
      ...(unavailable ? { reason: unavailable.reason, enableWith: unavailable.enableWith } : {}),
    };
  });
  const model = agentModelChoice(definition, {
    mainModel: runtime.options.mainModel,
    subagentModel: runtime.options.subagentModel,
    declaredModel: loaded.definition.model,
  });
  if (json) {
    const shown = { ...definition, tools, source: loaded.source, notes: loaded.notes };
    context.stdout.write(
      `${JSON.stringify({ ...shown, model: model.model ?? null, modelReason: model.reason, declaredModel: loaded.definition.model ?? null }, null, 2)}\n`,
    );
    return EXIT.ok;
  }
  const out = context.stdout;
  out.write(`${definition.name}${definition.enabled ? '' : ' (disabled)'}\n${definition.description}\n\n`);
  out.write(`source:   ${loaded.source.kind} ${loaded.source.path}\n`);
  out.write(`model:    ${model.model ?? '(none: set CADRE_MODEL)'}  (${model.reason})\n`);
  out.write(`context:  ${definition.context}\n`);
  const limits = runtime.limits;
  out.write(`maxTurns: ${definition.maxTurns ?? limits.maxTurns}\n`);
  if (Object.keys(definition.inputs).length)
    out.write(`inputs:   task, ${Object.keys(definition.inputs).join(', ')}\n`);
  out.write('tools:\n');
  for (const tool of tools) {
    const state = tool.available
      ? ''
      : `  (not offered: ${tool.reason}${tool.enableWith ? `; enable with ${tool.enableWith}` : ''})`;
    out.write(`  - ${tool.name}${tool.kind === 'agent' ? ' (sub-agent)' : ''}${state}\n`);
  }
  for (const note of loaded.notes) out.write(`note: ${note}\n`);
  out.write(`\n${definition.instructions}\n`);
  return EXIT.ok;
}

/** An allow-list entry as the tools it stands for (`mcp__x__*`: the server's tools, or itself if none). */
function mcpEntries(cadre: Cadre): (entry: string) => string[] {
  return (entry) => {
    const expanded = cadre.tools.expand(entry);
    return expanded.length ? expanded : [entry];
  };
}

function check(cadre: Cadre, context: CliContext, files: string[], json: boolean): number {
  const targets: Array<{ path: string; kind: AgentSourceKind }> = files.length
    ? files.map((path) => ({ path, kind: path.includes('.claude/') ? 'claude' : 'project' }))
    : [...cadre.catalog.agents.values()]
        .map((loaded) => loaded.source)
        .concat(cadre.catalog.problems.map((problem) => ({ path: problem.path, kind: 'project' as const })));
  const names = new Set(cadre.catalog.agents.keys());
  const results = targets.map(({ path, kind }) => {
    try {
      const loaded = loadAgentFile(path, kind, (tool) => names.has(tool) || cadre.tools.has(tool));
      return { path, ok: true, name: loaded.definition.name, notes: loaded.notes };
    } catch (error) {
      return { path, ok: false, error: (error as Error).message };
    }
  });
  if (json) context.stdout.write(`${JSON.stringify({ results }, null, 2)}\n`);
  else {
    for (const result of results) {
      if (result.ok) context.stdout.write(`ok    ${result.path}\n`);
      else context.stdout.write(`error ${result.error}\n`);
      for (const note of result.notes ?? []) context.stdout.write(`      note: ${note}\n`);
    }
  }
  return results.every((result) => result.ok) ? EXIT.ok : EXIT.notOk;
}
