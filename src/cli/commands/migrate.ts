import { UserError } from '../../core/index.ts';
import { type CliCommand, openCadre } from '../cli-context.ts';
import { type CommandSpec, type FlagSpec, parseCommand } from '../command-args.ts';
import { EXIT } from '../errors.ts';

export const MIGRATE = {
  usage: ['cadre migrate [--json]'],
  summary:
    "Brings Cadre's database (CADRE_DATABASE_URL, else $CADRE_HOME/cadre.db) up to this version's schema, " +
    'for operators who want that step apart from starting servers and workers (which apply what is ' +
    'missing too, as they open it). Says which migrations it applied; refuses a database a newer Cadre ' +
    'migrated.',
  flags: {
    json: { type: 'boolean', description: 'print the result as JSON' },
    config: { type: 'string', placeholder: 'FILE', description: 'the config file to read' },
  },
} as const satisfies CommandSpec<Record<string, FlagSpec>>;

/** `cadre migrate`: applies the migrations the database lacks, and says which. */
export const migrateCommand: CliCommand = async (args, context) => {
  const { values, positionals } = parseCommand(MIGRATE, args);
  if (positionals.length) throw new UserError('usage', `cadre migrate takes no words ("${positionals[0]}")`);
  const started = Date.now();
  // Opening the store applies what is missing, once, whichever process opens it first.
  const cadre = await openCadre(context, { ...values, lazy: true, 'no-worker': true });
  try {
    const state = await cadre.store.health();
    const applied = state.applied.filter((migration) => migration.appliedAt >= started).map((m) => m.id);
    const database = cadre.store.jobs ? 'PostgreSQL' : 'SQLite';
    if (values.json) {
      context.stdout.write(
        `${JSON.stringify({ database, applied, current: state.applied.length, unknown: state.unknown })}\n`,
      );
    } else {
      context.stdout.write(
        applied.length
          ? `Applied ${applied.length} migration(s) to the ${database} database: ${applied.join(', ')}.\n`
          : `The ${database} database is current (${state.applied.length} migrations applied).\n`,
      );
    }
    if (state.unknown.length) {
      context.stderr.write(
        `cadre: the database was migrated by a newer Cadre (${state.unknown.join(', ')}); upgrade this one before it serves or works the queue.\n`,
      );
      return EXIT.notOk;
    }
    return EXIT.ok;
  } finally {
    await cadre.close();
  }
};
