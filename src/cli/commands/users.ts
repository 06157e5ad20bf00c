import { addUser, listUsers, removeUser, type UserStore } from '../../app/users.ts';
import { UserError } from '../../core/index.ts';
import { type CliCommand, type CliContext, openCadre } from '../cli-context.ts';
import { answerHelp, type CommandSpec, type FlagSpec, parseCommand } from '../command-args.ts';
import { EXIT } from '../errors.ts';

const USAGE = `usage:
  cadre users add NAME [--json]   prints the new token once ({name, token} with --json)
  cadre users list [--json]
  cadre users rm NAME
`;

export const USERS = {
  usage: ['cadre users add NAME [--json]', 'cadre users list [--json]', 'cadre users rm NAME'],
  summary:
    'People (or programs) who may use cadre serve, each with a bearer token; add prints the token once ' +
    '(only a hash is kept). Once any user exists the server requires a token on every API route.',
  flags: { json: { type: 'boolean', default: false, description: 'print JSON (add: {name, token})' } },
} as const satisfies CommandSpec<Record<string, FlagSpec>>;

/**
 * `cadre users add|list|rm`: people (or programs) who may use `cadre serve`, each with a bearer token. Once
 * any user exists the server requires a token on every API route, and may listen beyond loopback.
 */
export const usersCommand: CliCommand = async (args, context) => {
  const [sub, ...rest] = args;
  answerHelp(USERS, args);
  const { values, positionals } = parseCommand(USERS, rest);
  const cadre = await openCadre(context, { lazy: true });
  try {
    return await usersAction(sub, positionals, values.json, cadre.users, context);
  } finally {
    await cadre.close();
  }
};

async function usersAction(
  sub: string | undefined,
  positionals: string[],
  json: boolean,
  users: UserStore,
  context: CliContext,
): Promise<number> {
  const values = { json };
  switch (sub) {
    case 'add': {
      const name = positionals[0];
      if (!name || positionals.length > 1)
        throw new UserError('usage', `usage: cadre users add NAME [--json]`);
      const { user, token } = await addUser(users, name);
      if (values.json) context.stdout.write(`${JSON.stringify({ name: user.name, token })}\n`);
      else
        context.stdout.write(
          `Added ${user.name}. Their token (shown once; only a hash is kept):\n\n  ${token}\n\n` +
            `Use it as  Authorization: Bearer ${token.slice(0, 10)}…\n`,
        );
      return EXIT.ok;
    }
    case 'list':
    case 'ls':
    case undefined: {
      const list = await listUsers(users);
      if (values.json)
        context.stdout.write(
          `${JSON.stringify({ users: list.map(({ name, createdAt }) => ({ name, createdAt })) }, null, 2)}\n`,
        );
      else if (!list.length)
        context.stdout.write(
          'No users: cadre serve answers on loopback only, as you. Add one: cadre users add NAME\n',
        );
      else for (const user of list) context.stdout.write(`${user.name}  added ${user.createdAt}\n`);
      return EXIT.ok;
    }
    case 'rm':
    case 'remove': {
      const name = positionals[0];
      if (!name) throw new UserError('usage', 'usage: cadre users rm NAME');
      if (!(await removeUser(users, name)))
        throw new UserError('unknown_user', `There is no user named "${name}". See: cadre users list`);
      context.stdout.write(`Removed ${name}; their token no longer works.\n`);
      return EXIT.ok;
    }
    default:
      context.stderr.write(`cadre users: unknown command "${sub}"\n${USAGE}`);
      return EXIT.usage;
  }
}
