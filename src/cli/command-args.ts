import { type ParseArgsOptionsConfig, parseArgs } from 'node:util';
import { UserError } from '../core/errors.ts';

/** One flag: what `parseArgs` needs, plus the words `--help` prints for it. */
export type FlagSpec = ParseArgsOptionsConfig[string] & { description: string; placeholder?: string };

/** A command's usage lines, what it does, and every flag it takes: `--help` prints all of it. */
export interface CommandSpec<Flags extends Record<string, FlagSpec>> {
  usage: string[];
  summary: string;
  flags: Flags;
}

/** Thrown by parseCommand when `--help` or `-h` was given; main prints the text and exits 0. */
export class HelpRequested extends Error {
  readonly text: string;
  constructor(text: string) {
    super('help requested');
    this.text = text;
  }
}

/**
 * `parseArgs` for a sub-command, with `--help` answered from the same spec the arguments are parsed
 * with, so the help always lists every flag the command takes.
 */
export function parseCommand<Flags extends Record<string, FlagSpec>>(
  spec: CommandSpec<Flags>,
  args: string[],
) {
  if (asksForHelp(args)) throw new HelpRequested(helpText(spec));
  const parsed = parseArgs({ args, options: spec.flags, allowPositionals: true, strict: true });
  // `--session "$SESSION"` with the variable unset would otherwise mean no flag at all: a new session, the
  // default model or folder, silently instead of what the person meant.
  for (const [name, value] of Object.entries(parsed.values)) {
    const values = Array.isArray(value) ? value : [value];
    if (values.some((one) => typeof one === 'string' && !one.trim()))
      throw new UserError('usage', `--${name} was given an empty value (an unset shell variable?)`);
  }
  return parsed;
}

/** For commands with sub-commands: HelpRequested for `--help`/`-h` anywhere before `--`, or `help` first. */
export function answerHelp(spec: CommandSpec<Record<string, FlagSpec>>, args: string[]): void {
  if (asksForHelp(args) || args[0] === 'help') throw new HelpRequested(helpText(spec));
}

function asksForHelp(args: string[]): boolean {
  const end = args.indexOf('--');
  const flags = end === -1 ? args : args.slice(0, end);
  return flags.includes('--help') || flags.includes('-h');
}

/** The help text of a command. */
export function helpText(spec: CommandSpec<Record<string, FlagSpec>>): string {
  const lines = ['usage:', ...spec.usage.map((line) => `  ${line}`), '', spec.summary, ''];
  const entries = Object.entries(spec.flags).map(([name, flag]) => {
    const value = flag.type === 'string' ? ` ${flag.placeholder ?? 'VALUE'}` : '';
    const short = flag.short ? `-${flag.short}, ` : '';
    return [
      `${short}--${name}${value}`,
      `${flag.description}${flag.multiple ? ' (may be repeated)' : ''}`,
    ] as const;
  });
  entries.push(['-h, --help', 'show this help']);
  const width = Math.max(...entries.map(([left]) => left.length));
  lines.push('flags:', ...entries.map(([left, right]) => `  ${left.padEnd(width)}  ${right}`));
  return `${lines.join('\n')}\n`;
}
