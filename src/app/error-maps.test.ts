import { describe, expect, it } from 'vitest';
import { CadreError, ModelBehaviorError, SystemError, UserError } from '../core/errors.ts';
import { DocumentRejectedError } from '../documents/errors.ts';
import { BlockedUrlError } from '../tools/http/http-errors.ts';
import { EXIT, errorBody, exitCodeFor, httpStatusFor } from './error-maps.ts';

describe('errors by fault', () => {
  it('map to HTTP statuses: the person 4xx, the model 502, the system 5xx, a bug 500', () => {
    expect(httpStatusFor(new UserError('usage', 'bad flag'))).toBe(400);
    expect(httpStatusFor(new UserError('config_invalid', 'bad config'))).toBe(400);
    for (const code of ['unknown_session', 'unknown_run', 'unknown_document', 'unknown_agent']) {
      expect(httpStatusFor(new UserError(code, 'none'))).toBe(404);
    }
    expect(httpStatusFor(new UserError('session_exists', 'taken'))).toBe(409);
    expect(httpStatusFor(new DocumentRejectedError('too_large', 'big'))).toBe(413);
    expect(httpStatusFor(new DocumentRejectedError('empty', 'no text'))).toBe(400);
    expect(httpStatusFor(new BlockedUrlError('http://10.0.0.1/', 'private'))).toBe(400);
    expect(httpStatusFor(new ModelBehaviorError('fan_out', 'too many'))).toBe(502);
    expect(httpStatusFor(new UserError('too_many_chats', 'wait'))).toBe(429);
    expect(httpStatusFor(new UserError('no_model', 'set one'))).toBe(503);
    // The server has no key for the model it would run: nothing the HTTP client sent is wrong.
    expect(httpStatusFor(new UserError('missing_key', 'export OPENAI_API_KEY'))).toBe(503);
    expect(httpStatusFor(new SystemError('disk', 'full'))).toBe(500);
    expect(httpStatusFor(new SystemError('provider_unavailable', 'down'))).toBe(503);
    expect(httpStatusFor(new Error('bug'))).toBe(500);
    expect(httpStatusFor('a string')).toBe(500);
  });

  it('map to exit codes: the person 2, anything else 3', () => {
    expect(exitCodeFor(new UserError('usage', 'x'))).toBe(EXIT.usage);
    expect(exitCodeFor(new DocumentRejectedError('empty', 'x'))).toBe(2);
    expect(exitCodeFor(new ModelBehaviorError('bad_args', 'x'))).toBe(EXIT.system);
    expect(exitCodeFor(new SystemError('disk', 'x'))).toBe(3);
    expect(exitCodeFor(new TypeError('bug'))).toBe(3);
  });

  it("describe themselves to HTTP clients without leaking a bug's message", () => {
    expect(errorBody(new UserError('unknown_run', 'There is no run "x".'))).toEqual({
      error: { message: 'There is no run "x".', code: 'unknown_run' },
    });
    expect(errorBody(new Error('secret path /home/me')).error.message).not.toContain('secret');
    expect(CadreError.isInstance(new UserError('x', 'y'))).toBe(true);
  });
});
