import { type ParseArgsOptionsConfig, parseArgs } from 'node:util';
import { closestName, UserError } from '../core/index.ts';

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
  const parsed = parseFlags(spec, negativeNumbersAsValues(spec.flags, args));
  // `--session "$SESSION"` with the variable unset would otherwise mean no flag at all: a new session, the
  // default model or folder, silently instead of what the person meant.
  for (const [name, value] of Object.entries(parsed.values)) {
    const values = Array.isArray(value) ? value : [value];
    if (values.some((one) => typeof one === 'string' && !one.trim()))
      throw new UserError('usage', `--${name} was given an empty value (an unset shell variable?)`);
  }
  return parsed;
}

/**
 * Node's parser, its errors said in Cadre's words: which flag was not understood, the closest one the
 * command takes, and what a flag's value should be.
 */
function parseFlags<Flags extends Record<string, FlagSpec>>(spec: CommandSpec<Flags>, args: string[]) {
  try {
    return parseArgs({ args, options: spec.flags, allowPositionals: true, strict: true });
  } catch (error) {
    throw flagError(spec, error);
  }
}

function flagError(spec: CommandSpec<Record<string, FlagSpec>>, error: unknown): unknown {
  const code = (error as { code?: unknown }).code;
  const message = error instanceof Error ? error.message : String(error);
  const flag = /'(-{1,2}[^'\s=]+)/.exec(message)?.[1];
  if (!flag) return error;
  const command = spec.usage[0]?.split(' ').slice(0, 2).join(' ') ?? 'cadre';
  const help = `(${command} --help lists its flags)`;
  if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') {
    const names = Object.keys(spec.flags);
    const close = closestName(flag.replace(/^-+/, ''), names);
    return new UserError(
      'usage',
      `unknown flag ${flag} for ${command}.${close ? ` Did you mean --${close}?` : ''} ${help}`,
      { flag },
    );
  }
  if (code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE') {
    const name = Object.entries(spec.flags).find(
      ([long, each]) => flag === `--${long}` || flag === `-${each.short}`,
    );
    if (!name) return error;
    const [long, each] = name;
    if (each.type === 'boolean') return new UserError('usage', `--${long} takes no value: write it alone.`);
    return new UserError(
      'usage',
      `--${long} needs a value (${each.placeholder ?? 'VALUE'}: ${each.description}); the next argument starts with "-", so it reads as a flag. Write --${long}=VALUE for a value that starts with "-".`,
      { flag },
    );
  }
  return error;
}

/**
 * `--timeout -5` as `--timeout=-5`: a negative number after a flag that takes a value is that value (Node
 * calls it ambiguous), so the flag's own check can say what a valid value is.
 */
function negativeNumbersAsValues(flags: Record<string, FlagSpec>, args: string[]): string[] {
  const takesValue = new Set<string>();
  for (const [long, flag] of Object.entries(flags)) {
    if (flag.type !== 'string') continue;
    takesValue.add(`--${long}`);
    if (flag.short) takesValue.add(`-${flag.short}`);
  }
  const out: string[] = [];
  for (let index = 0; index < args.length; index++) {
    const arg = args[index]!;
    if (arg === '--') {
      out.push(...args.slice(index));
      break;
    }
    const next = args[index + 1];
    if (takesValue.has(arg) && next !== undefined && /^-\d/.test(next)) {
      out.push(`${arg}=${next}`);
      index++;
    } else out.push(arg);
  }
  return out;
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
