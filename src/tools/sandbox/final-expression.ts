/**
 * `run_js` promises that code ends with `return value` or a final expression. A script's final expression
 * is its completion value, but code with a top-level `await` has to run as an async function body, where
 * a final expression is dropped. This finds where the code's last top-level statement starts and, when
 * that statement is an expression, returns the body with `return (…)` around it. It is a scanner, not a
 * parser: it skips strings, templates, comments and regular expressions, counts brackets, and reads a
 * line break as a statement's end where JavaScript's own semicolon insertion would. The worker compiles
 * the result and keeps the plain body when it does not compile.
 */

/** Starts of statements that are not expressions: nothing to return. */
const STATEMENT_KEYWORDS =
  /^(?:return|const|let|var|if|else|for|while|do|switch|try|catch|finally|throw|function|class|async\s+function|break|continue|import|export|debugger)\b/;

/** A line break does not end a statement before these (the next line continues the expression). */
const CONTINUES_NEXT = /^(?:[([`+\-*/%,.?:=<>&|^]|in\b|instanceof\b)/;

/** ...nor after these (the line ends in the middle of an expression). */
const CONTINUES_PREVIOUS = /[+\-*/%,.?:=<>&|^!~([{]$/;

/** The body with its final expression returned, or undefined when it does not end with one. */
export function returnFinalExpression(code: string): string | undefined {
  const start = lastStatementStart(code);
  if (start === undefined) return undefined;
  const tail = code.slice(start).trim().replace(/;+$/, '').trim();
  if (!tail || STATEMENT_KEYWORDS.test(tail) || tail.startsWith('{') || tail.startsWith('}'))
    return undefined;
  return `${code.slice(0, start)}\nreturn (\n${tail}\n);`;
}

/** Where the last top-level statement begins, or undefined when the code cannot be scanned. */
function lastStatementStart(code: string): number | undefined {
  let depth = 0;
  let start = 0;
  /** The last character that is not space or comment, to tell a regular expression from a division. */
  let previous = '';
  let index = 0;
  const templates: number[] = [];
  while (index < code.length) {
    const char = code[index]!;
    const next = code[index + 1];
    if (char === '/' && next === '/') {
      const end = code.indexOf('\n', index);
      index = end < 0 ? code.length : end;
      continue;
    }
    if (char === '/' && next === '*') {
      const end = code.indexOf('*/', index + 2);
      if (end < 0) return undefined;
      index = end + 2;
      continue;
    }
    if (char === '"' || char === "'") {
      index = skipQuoted(code, index, char);
      if (index < 0) return undefined;
      previous = char;
      continue;
    }
    if (char === '`' || (char === '}' && templates.at(-1) === depth)) {
      if (char === '}') templates.pop();
      const end = skipTemplate(code, index + 1);
      if (end.index < 0) return undefined;
      index = end.index;
      if (end.interpolation) templates.push(depth);
      previous = '`';
      continue;
    }
    if (char === '/' && (previous === '' || /[(,=:[!&|?{};+\-*%<>~^]/.test(previous))) {
      index = skipRegex(code, index);
      if (index < 0) return undefined;
      previous = '/';
      continue;
    }
    if (char === '(' || char === '[' || char === '{') depth++;
    else if (char === ')' || char === ']' || char === '}') depth--;
    if (depth < 0) return undefined;
    if (depth === 0 && (char === ';' || char === '}')) start = index + 1;
    if (depth === 0 && char === '\n') {
      const rest = code.slice(index + 1).trimStart();
      if (rest && !CONTINUES_NEXT.test(rest) && !CONTINUES_PREVIOUS.test(previous)) start = index + 1;
    }
    if (!/\s/.test(char)) previous = char;
    index++;
  }
  if (depth !== 0 || templates.length) return undefined;
  // Trailing blank lines or semicolons after the last statement: step back to the statement itself.
  if (!code.slice(start).trim().replace(/;/g, '').trim()) {
    const trimmed = code.replace(/[\s;]+$/, '');
    return trimmed.length < code.length ? lastStatementStart(trimmed) : undefined;
  }
  return start;
}

function skipQuoted(code: string, from: number, quote: string): number {
  for (let index = from + 1; index < code.length; index++) {
    if (code[index] === '\\') index++;
    else if (code[index] === quote) return index + 1;
    else if (code[index] === '\n') return -1;
  }
  return -1;
}

/** Past a template's text up to its end (`) or its next `${`, which the caller's bracket count takes. */
function skipTemplate(code: string, from: number): { index: number; interpolation: boolean } {
  for (let index = from; index < code.length; index++) {
    if (code[index] === '\\') index++;
    else if (code[index] === '`') return { index: index + 1, interpolation: false };
    else if (code[index] === '$' && code[index + 1] === '{') return { index: index + 2, interpolation: true };
  }
  return { index: -1, interpolation: false };
}

function skipRegex(code: string, from: number): number {
  let inClass = false;
  for (let index = from + 1; index < code.length; index++) {
    const char = code[index];
    if (char === '\\') index++;
    else if (char === '[') inClass = true;
    else if (char === ']') inClass = false;
    else if (char === '/' && !inClass) {
      let end = index + 1;
      while (end < code.length && /[a-z]/i.test(code[end]!)) end++;
      return end;
    } else if (char === '\n') return -1;
  }
  return -1;
}
