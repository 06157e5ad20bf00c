import type { Cadre } from '../../app/create-cadre.ts';
import { UserError } from '../../core/index.ts';
import { type CliCommand, type CliContext, openCadre } from '../cli-context.ts';
import { answerHelp, type CommandSpec, type FlagSpec, parseCommand } from '../command-args.ts';
import { EXIT } from '../errors.ts';
import { printableLine, withoutControls } from '../terminal-text.ts';

export const AGENTS = {
  usage: [
    'cadre agents list [--json]',
    'cadre agents show NAME [--json]',
    'cadre agents check [FILE...] [--json]',
  ],
  summary:
    'Agent definitions and where each came from (built-in, $CADRE_HOME/agents, ./.cadre/agents, ' +
    './.claude/agents). show prints one with its model (and why), limits and tools; check validates files.',
  flags: {
    json: { type: 'boolean', default: false, description: 'print JSON' },
    config: { type: 'string', placeholder: 'FILE', description: 'read this config file too' },
  },
} as const satisfies CommandSpec<Record<string, FlagSpec>>;

/** `cadre agents list|show NAME|check [FILE...]` */
export const agentsCommand: CliCommand = async (args, context) => {
  const [sub, ...rest] = args;
  answerHelp(AGENTS, args);
  const { values, positionals } = parseCommand(AGENTS, rest);
  const cadre = await openCadre(context, values);
  try {
    switch (sub) {
      case 'list':
      case undefined:
        return await list(cadre, context, values.json);
      case 'show':
        return await show(cadre, context, positionals[0], values.json);
      case 'check':
        return await check(cadre, context, positionals, values.json);
      default:
        throw new UserError(
          'usage',
          `unknown agents command "${sub}"; use list, show NAME or check [FILE...]`,
        );
    }
  } finally {
    await cadre.close();
  }
};

async function list(cadre: Cadre, context: CliContext, json: boolean): Promise<number> {
  const { agents: rows, problems } = await cadre.agents.list(context.userId);
  if (json) {
    context.stdout.write(`${JSON.stringify({ agents: rows, problems }, null, 2)}\n`);
    return EXIT.ok;
  }
  // Descriptions, notes and problems come from definition files, some from the folder's own (a stranger's
  // repository): shown without the control sequences they may hold.
  const width = Math.max(...rows.map((row) => row.name.length), 4);
  for (const row of rows) {
    const state = row.enabled ? '' : ' (disabled)';
    context.stdout.write(
      `${row.name.padEnd(width)}  ${row.source.padEnd(7)}  ${printableLine(row.description)}${state}\n`,
    );
    context.stdout.write(
      `${''.padEnd(width)}  ${''.padEnd(7)}  ${row.path}${row.overrides ? ` (overrides ${row.overrides})` : ''}\n`,
    );
    for (const note of row.notes)
      context.stdout.write(`${''.padEnd(width)}  ${''.padEnd(7)}  note: ${printableLine(note)}\n`);
  }
  for (const problem of problems) context.stderr.write(`problem: ${printableLine(problem.message)}\n`);
  return EXIT.ok;
}

/** What `background` in the front matter means, as `cadre agents show` says it. */
const BACKGROUND_WORDS: Record<string, string> = {
  true: 'runs in the background (every delegation to it)',
  allowed: 'may run in the background (its caller chooses)',
  false: 'no (its caller waits for it)',
};

async function show(
  cadre: Cadre,
  context: CliContext,
  name: string | undefined,
  json: boolean,
): Promise<number> {
  if (!name) throw new UserError('usage', 'usage: cadre agents show NAME');
  const { definition, tools, source, notes, limits, model, declaredModel } = await cadre.agents.show(
    context.userId,
    name,
  );
  if (json) {
    const shown = { ...definition, tools, source, notes };
    context.stdout.write(
      `${JSON.stringify({ ...shown, model: model.model ?? null, modelReason: model.reason, declaredModel: declaredModel ?? null }, null, 2)}\n`,
    );
    return EXIT.ok;
  }
  const out = context.stdout;
  out.write(
    `${definition.name}${definition.enabled ? '' : ' (disabled)'}\n${printableLine(definition.description)}\n\n`,
  );
  out.write(`source:   ${source.kind} ${source.path}\n`);
  out.write(`model:    ${model.model ?? '(none: set CADRE_MODEL)'}  (${model.reason})\n`);
  out.write(`context:  ${definition.context}\n`);
  out.write(`background: ${BACKGROUND_WORDS[String(definition.background)]}\n`);
  out.write(`maxTurns: ${definition.maxTurns ?? limits.maxTurns}\n`);
  const callSeconds = definition.modelCallTimeout ?? limits.modelCallTimeoutMs / 1000;
  out.write(
    `limits:   maxOutputTokens ${definition.maxOutputTokens ?? limits.maxOutputTokens}, modelCallTimeout ${callSeconds} s, ` +
      `maxResultChars ${definition.maxResultChars ?? limits.maxResultChars}\n`,
  );
  if (Object.keys(definition.inputs).length)
    out.write(`inputs:   task, ${Object.keys(definition.inputs).join(', ')}\n`);
  out.write('tools:\n');
  for (const tool of tools) {
    const state = tool.available
      ? ''
      : `  (not offered: ${printableLine(tool.reason ?? '')}${tool.enableWith ? `; enable with ${tool.enableWith}` : ''})`;
    out.write(`  - ${tool.name}${tool.kind === 'agent' ? ' (sub-agent)' : ''}${state}\n`);
  }
  for (const note of notes) out.write(`note: ${printableLine(note)}\n`);
  out.write(`\n${withoutControls(definition.instructions)}\n`);
  return EXIT.ok;
}

async function check(cadre: Cadre, context: CliContext, files: string[], json: boolean): Promise<number> {
  const results = await cadre.agents.check(files);
  if (json) context.stdout.write(`${JSON.stringify({ results }, null, 2)}\n`);
  else {
    for (const result of results) {
      if (result.ok) context.stdout.write(`ok    ${result.path}\n`);
      else context.stdout.write(`error ${printableLine(result.error ?? '')}\n`);
      for (const note of result.notes ?? []) context.stdout.write(`      note: ${printableLine(note)}\n`);
    }
  }
  return results.every((result) => result.ok) ? EXIT.ok : EXIT.notOk;
}
