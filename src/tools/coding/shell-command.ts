/**
 * What a `bash` command line runs, read with a real shell parser (tree-sitter's bash grammar, compiled to
 * WebAssembly) rather than split on operators: approval rules are matched against every simple command in
 * it, each with its name as a program (`/bin/rm` and `\rm` are `rm`), and anything that hides which
 * program runs (a substitution, a subshell, `eval`, `bash -c`, a variable as the command, a wrapper such
 * as `env`, `xargs` or `find -exec`) makes the line one that must be asked about.
 */
import { createRequire } from 'node:module';
import path from 'node:path';
import type { Parser, Node as SyntaxNode } from 'web-tree-sitter';
import type { ResolvedSubject } from '../../core/approval-rules.ts';

let parser: Promise<Parser> | undefined;

function bashParser(): Promise<Parser> {
  parser ??= (async () => {
    const { Parser, Language } = await import('web-tree-sitter');
    await Parser.init();
    const require = createRequire(import.meta.url);
    const language = await Language.load(require.resolve('tree-sitter-bash/tree-sitter-bash.wasm'));
    const made = new Parser();
    made.setLanguage(language);
    return made;
  })();
  return parser;
}

/** Programs that run another program named in their arguments. */
const WRAPPERS = new Set([
  'env',
  'command',
  'builtin',
  'exec',
  'xargs',
  'nohup',
  'time',
  'nice',
  'timeout',
  'sudo',
  'doas',
  'su',
  'stdbuf',
  'setsid',
  'chroot',
  'unbuffer',
  'watch',
  'parallel',
  'flock',
  'strace',
  'ionice',
  'taskset',
]);
/** Programs that run code given as a string, a file or standard input. */
const EVALUATORS = new Set(['eval', 'source', '.', 'bash', 'sh', 'zsh', 'dash', 'ksh', 'fish', 'busybox']);
/** Syntax that runs commands the line does not name where the rules can see them. */
const HIDING = new Map([
  ['command_substitution', 'a command substitution ($(…) or `…`)'],
  ['process_substitution', 'a process substitution (<(…) or >(…))'],
  ['subshell', 'a subshell ((…))'],
  ['function_definition', 'a function definition'],
  ['arithmetic_expansion', 'an arithmetic expansion'],
]);

/** Reads `line`; a line the parser cannot read whole is uncertain. */
export async function readShellCommand(line: string, depth = 0): Promise<ResolvedSubject> {
  const tree = (await bashParser()).parse(line);
  if (!tree)
    return {
      subjects: [line.trim()],
      uncertain: 'the command could not be parsed',
      hidden: 'the command could not be parsed',
    };
  try {
    const reading: Reading = { commands: [], reasons: [], hidden: [], variables: new Map() };
    await visit(tree.rootNode, reading, depth);
    return {
      subjects: reading.commands,
      ...(reading.reasons.length ? { uncertain: reading.reasons[0] } : {}),
      ...(reading.hidden.length ? { hidden: reading.hidden[0] } : {}),
    };
  } finally {
    tree.delete();
  }
}

interface Reading {
  /** Every simple command found, program first. */
  commands: string[];
  /** Why no allow entry may vouch for the line. */
  reasons: string[];
  /** Why some program it runs cannot be named. */
  hidden: string[];
  /** Variables given a plain value earlier in the line (`x=rm`), so `$x` in command position is `rm`. */
  variables: Map<string, string>;
}

async function visit(node: SyntaxNode, reading: Reading, depth: number): Promise<void> {
  if (node.isError || node.isMissing) {
    reading.reasons.push('the command could not be parsed whole');
    reading.hidden.push('the command could not be parsed whole');
  }
  const hiding = HIDING.get(node.type);
  if (hiding) reading.reasons.push(`it has ${hiding}`);
  if (node.type === 'variable_assignment') noteAssignment(node, reading);
  if (node.type === 'command') await readCommand(node, reading, depth);
  for (const child of node.children) if (child) await visit(child, reading, depth);
}

function noteAssignment(node: SyntaxNode, reading: Reading) {
  const name = node.childForFieldName('name')?.text;
  const value = node.childForFieldName('value');
  if (!name) return;
  // Only a plain word is known; anything computed is forgotten, so `$x` after it stays unnamed.
  if (value && !value.descendantsOfType(['simple_expansion', 'expansion', 'command_substitution']).length)
    reading.variables.set(name, unquoted(value.text));
  else reading.variables.delete(name);
}

/** `$x` or `${x}` (quoted or not) with a value known from the line, else undefined. */
function knownVariable(text: string, variables: Map<string, string>): string | undefined {
  const name = /^"?\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?"?$/.exec(text)?.[1];
  return name === undefined ? undefined : variables.get(name);
}

async function readCommand(node: SyntaxNode, reading: Reading, depth: number) {
  const { commands, reasons } = reading;
  const nameNode = node.childForFieldName('name');
  if (!nameNode) return;
  let name: string | undefined;
  if (nameNode.descendantsOfType(['simple_expansion', 'expansion', 'command_substitution']).length) {
    reasons.push('a variable or substitution is in command position');
    name = knownVariable(nameNode.text, reading.variables);
    if (name === undefined) reading.hidden.push('a variable or substitution is in command position');
  }
  const words = [nameNode, ...node.childrenForFieldName('argument').filter((child) => child !== null)].map(
    (child) => unquoted(child.text),
  );
  const [spelled = '', ...args] = words;
  const program = path.posix.basename(name ?? spelled);
  commands.push([program, ...args].join(' '));
  if (EVALUATORS.has(program)) {
    reasons.push(`it runs code through ${program}`);
    // `bash -c 'rm x'`: what it runs is read too, so a deny rule still sees `rm x`.
    const script = args[args.indexOf('-c') + 1];
    if (args.includes('-c') && script && depth < 3) {
      const inner = await readShellCommand(script, depth + 1);
      commands.push(...inner.subjects);
      if (inner.hidden) reading.hidden.push(inner.hidden);
    } else if (program === 'eval' && args.length && depth < 3) {
      const inner = await readShellCommand(args.join(' '), depth + 1);
      commands.push(...inner.subjects);
      if (inner.hidden) reading.hidden.push(inner.hidden);
    } else {
      // A script file, standard input, a `source`d file: what it runs is not on the line.
      reading.hidden.push(`${program} runs code that is not on the command line`);
    }
  }
  if (WRAPPERS.has(program)) {
    reasons.push(`${program} runs another program`);
    // What it runs, so deny rules see it: past its options, assignments and (timeout's) duration.
    const plain = args.flatMap((arg, at) => (arg.startsWith('-') || /^\w+=/.test(arg) ? [] : [at]));
    const wrapped = plain[program === 'timeout' ? 1 : 0];
    if (wrapped !== undefined)
      commands.push([path.posix.basename(args[wrapped]!), ...args.slice(wrapped + 1)].join(' '));
  }
  if (
    program === 'find' &&
    args.some((arg) => ['-exec', '-execdir', '-ok', '-okdir', '-delete'].includes(arg))
  ) {
    reasons.push('find runs or deletes through -exec/-delete');
    const at = args.findIndex((arg) => arg.startsWith('-exec') || arg.startsWith('-ok'));
    if (at !== -1 && args[at + 1])
      commands.push([path.posix.basename(args[at + 1]!), ...args.slice(at + 2)].join(' '));
    // `-delete` removes what it finds, as `rm` would: rules about rm hold it too.
    const starts = args.findIndex((arg) => arg.startsWith('-') || arg === '(' || arg === '!');
    if (args.includes('-delete'))
      commands.push(['rm', '-r', ...args.slice(0, starts === -1 ? args.length : starts)].join(' '));
  }
}

/** A word as the shell passes it on: quotes removed, backslash escapes resolved (`\rm` → `rm`). */
function unquoted(text: string): string {
  let out = '';
  let quote: string | undefined;
  for (let at = 0; at < text.length; at++) {
    const char = text[at]!;
    if (quote) {
      if (char === quote) quote = undefined;
      else if (char === '\\' && quote === '"' && at + 1 < text.length) out += text[++at];
      else out += char;
    } else if (char === "'" || char === '"') quote = char;
    else if (char === '\\' && at + 1 < text.length) out += text[++at];
    else out += char;
  }
  return out;
}
