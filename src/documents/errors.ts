import { SystemError, UserError } from '../core/errors.ts';

/** A file Cadre will not add: wrong content for its type, too large, empty, unreadable. */
export class DocumentRejectedError extends UserError {
  constructor(code: string, message: string, details: Record<string, unknown> = {}) {
    super(code, message, details);
    this.name = 'DocumentRejectedError';
  }
}

/** A parser that crashed or ran out of time on a file that looked valid. */
export class DocumentParseError extends SystemError {
  constructor(code: string, message: string, details: Record<string, unknown> = {}, cause?: unknown) {
    super(code, message, details, cause);
    this.name = 'DocumentParseError';
  }
}
