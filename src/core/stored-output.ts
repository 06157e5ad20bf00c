import { outputJson } from './output-json.ts';

/** What stands for a tool output too large to keep: its head, its size, and that it was cut. */
export interface CutOutput {
  cut: true;
  /** Characters of JSON the whole output had. */
  chars: number;
  /** The first characters of that JSON. */
  head: string;
  note: string;
}

/**
 * A tool output as it is recorded (its event, the journal, the store): itself, or past `maxChars` of JSON
 * its head and size, saying it was cut. An MCP server returning 9 MB per call grew the database 616 MB
 * in one run and every read of the run served it whole. The model's own view is bounded separately
 * (maxToolOutputChars), from the output the tool returned.
 */
export function storedOutput<T>(output: T, maxChars: number): T | CutOutput {
  let json: string;
  if (typeof output === 'string') {
    if (output.length <= maxChars) return output;
    json = output;
  } else if (typeof output === 'object' && output !== null) {
    json = outputJson(output);
    if (json.length <= maxChars) return output;
  } else return output;
  return {
    cut: true,
    chars: json.length,
    head: json.slice(0, maxChars),
    note: `this output was ${json.length.toLocaleString('en')} characters; only the first ${maxChars.toLocaleString('en')} were kept (limits.maxStoredOutputChars)`,
  };
}
