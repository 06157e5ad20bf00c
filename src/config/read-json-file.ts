import { readFileSync } from 'node:fs';
import { UserError } from '../core/errors.ts';

/** A JSON file's parsed content; a file that does not parse is a config error naming the file. */
export function readJsonFile(path: string): unknown {
  try {
    return JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    throw new UserError('config_invalid', `${path}: not valid JSON (${(error as Error).message}).`, {
      file: path,
    });
  }
}
