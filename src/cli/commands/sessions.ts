import type { Cadre } from '../../app/create-cadre.ts';
import { UserError } from '../../core/index.ts';
import { type CliCommand, type CliContext, openCadre } from '../cli-context.ts';
import { answerHelp, type CommandSpec, type FlagSpec, parseCommand } from '../command-args.ts';
import { EXIT } from '../errors.ts';
import { removeEach } from '../remove-each.ts';
import { printableLine } from '../terminal-text.ts';

export const SESSIONS = {
  usage: ['cadre sessions list [--json] [--limit N]', 'cadre sessions rm ID...'],
  summary:
    'Conversations kept as sessions, newest first. Continue one with cadre chat --session ID, ' +
    'cadre ask --session ID "..." or, for the newest, cadre ask -c "...".',
  flags: {
    json: { type: 'boolean', description: 'print JSON: {sessions: [{id, title, createdAt, updatedAt}]}' },
    limit: { type: 'string', placeholder: 'N', description: 'list at most N sessions (default 20)' },
  },
} as const satisfies CommandSpec<Record<string, FlagSpec>>;

/** `cadre sessions list|rm`: the caller's sessions. */
export const sessionsCommand: CliCommand = async (args, context) => {
  answerHelp(SESSIONS, args);
  const { values, positionals } = parseCommand(SESSIONS, args);
  const cadre = await openCadre(context, { lazy: true });
  try {
    return await sessionsAction(cadre, positionals, values, context);
  } finally {
    await cadre.close();
  }
};

async function sessionsAction(
  cadre: Cadre,
  positionals: string[],
  values: { json?: boolean | undefined; limit?: string | undefined },
  context: CliContext,
): Promise<number> {
  const [sub = 'list', ...ids] = positionals;
  if (sub === 'list') {
    const limit = values.limit === undefined ? 20 : Number(values.limit);
    if (!Number.isSafeInteger(limit) || limit < 1)
      throw new UserError('usage', `--limit ${values.limit}: expected a whole number above 0`);
    const list = await cadre.sessions.list(context.userId, { limit });
    if (values.json) {
      context.stdout.write(`${JSON.stringify({ sessions: list }, null, 2)}\n`);
      return EXIT.ok;
    }
    if (!list.length) context.stdout.write('No sessions yet. Start one: cadre chat\n');
    for (const session of list) {
      const title = printableLine(session.title) || '(untitled)';
      context.stdout.write(
        `${session.id}  ${session.updatedAt}  ${title.length > 70 ? `${title.slice(0, 69)}…` : title}\n`,
      );
    }
    return EXIT.ok;
  }
  if (sub === 'rm') {
    if (!ids.length) throw new UserError('usage', 'usage: cadre sessions rm ID...');
    return removeEach(
      ids,
      async (id) => {
        await cadre.sessions.delete(context.userId, id);
        return `Removed session ${printableLine(id)}.`;
      },
      context,
    );
  }
  throw new UserError(
    'usage',
    `unknown sessions command "${sub}"; use list or rm ID (cadre sessions --help)`,
  );
}
