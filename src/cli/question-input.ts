import { fstatSync } from 'node:fs';
import { StringDecoder } from 'node:string_decoder';
import { UserError } from '../core/index.ts';

/**
 * The most characters a question may have, with what was piped in, unless config `limits.maxQuestionChars`
 * says otherwise: about 500,000 tokens, past the context window of every model Cadre supports. More is
 * refused before any model call instead of being sent (and paid for) only to fail.
 */
export const DEFAULT_MAX_QUESTION_CHARS = 2_000_000;

/** Reads a stream to the end as UTF-8, stopping early (and saying so) once it is past `limit` characters. */
async function readAll(
  stream: NodeJS.ReadableStream,
  limit: number,
): Promise<{ text: string; over: boolean }> {
  // One decoder for the whole stream: a character whose bytes a pipe splits across two chunks (every
  // 64 KB) is decoded whole instead of as two U+FFFD.
  const decoder = new StringDecoder('utf8');
  let text = '';
  for await (const chunk of stream) {
    text += typeof chunk === 'string' ? chunk : decoder.write(chunk as Buffer);
    if (text.length > limit) return { text, over: true };
  }
  text += decoder.end();
  return { text, over: false };
}

/**
 * True when the process's stdin is a pipe, a socket or a file: something was sent in. Another stream (a
 * server's, a test's) or a stdin left as a terminal or /dev/null is not read unless `-` asks for it, so
 * nothing waits for input nobody will send.
 */
function somethingPiped(stdin: NodeJS.ReadableStream): boolean {
  if (stdin !== process.stdin) return false;
  try {
    const stat = fstatSync(0);
    return stat.isFIFO() || stat.isFile() || stat.isSocket();
  } catch {
    return false;
  }
}

/**
 * The question, as people pipe it in (`llm` and aider habits): `cadre ask -` reads all of stdin;
 * `cat notes.md | cadre ask "summarise"` puts the words first and what was piped after them. Stdin is read
 * only when something was piped in (see somethingPiped) or `-` asks for it.
 */
export async function questionFrom(
  positionals: string[],
  stdin: (NodeJS.ReadableStream & { isTTY?: boolean }) | undefined,
  maxChars = DEFAULT_MAX_QUESTION_CHARS,
): Promise<string> {
  const fromStdin = positionals.length === 1 && positionals[0] === '-';
  const words = fromStdin ? '' : positionals.join(' ').trim();
  let piped = '';
  if (stdin && (fromStdin || (!stdin.isTTY && somethingPiped(stdin)))) {
    const read = await readAll(stdin, maxChars);
    if (read.over) throw tooLong(`more than ${maxChars.toLocaleString('en')}`, maxChars);
    piped = read.text.trim();
  }
  const question = [words, piped].filter(Boolean).join('\n\n');
  checkQuestionLength(question, maxChars);
  return question;
}

/** Refuses a question (an `ask`, or a line typed or piped into `chat`) longer than `maxChars`. */
export function checkQuestionLength(question: string, maxChars = DEFAULT_MAX_QUESTION_CHARS): void {
  if (question.length > maxChars) throw tooLong(question.length.toLocaleString('en'), maxChars);
}

function tooLong(size: string, maxChars: number): UserError {
  return new UserError(
    'question_too_long',
    `The question is ${size} characters, more than the limit of ${maxChars.toLocaleString('en')} ` +
      '(about a quarter as many tokens; no model takes that much at once). Send a part of it, or add the ' +
      'file with `cadre docs add` and ask about it; config limits.maxQuestionChars changes the limit.',
    { maxChars },
  );
}
