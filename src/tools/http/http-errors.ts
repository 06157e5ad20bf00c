import { SystemError, UserError } from '../../core/errors.ts';

/**
 * Errors of the guarded HTTP client. A refused URL is the caller's fault (the model or a page asked for
 * something Cadre will not reach); a status, size or time failure is the remote side's. Every message is
 * one short line a model can act on.
 */
export class BlockedUrlError extends UserError {
  constructor(url: string, reason: string) {
    super('blocked_url', `Refused to fetch ${redact(url)}: ${reason}.`, { url: redact(url), reason });
    this.name = 'BlockedUrlError';
  }

  static is(value: unknown): value is BlockedUrlError {
    return value instanceof BlockedUrlError;
  }
}

export class HttpStatusError extends SystemError {
  readonly status: number;
  readonly retryAfterMs: number | undefined;
  readonly bodySnippet: string;

  constructor(url: string, status: number, bodySnippet: string, retryAfterMs?: number) {
    const wait = retryAfterMs === undefined ? '' : ` (retry after ${Math.ceil(retryAfterMs / 1000)} s)`;
    super('http_status', `HTTP ${status} from ${hostOf(url)}${wait}.`, { url: redact(url), status });
    this.name = 'HttpStatusError';
    this.status = status;
    this.retryAfterMs = retryAfterMs;
    this.bodySnippet = bodySnippet;
  }

  static is(value: unknown): value is HttpStatusError {
    return value instanceof HttpStatusError;
  }
}

/** The response broke a cap: too large, too slow, or of a content type the caller does not accept. */
export class ResponseRefusedError extends SystemError {
  constructor(
    code: 'too_large' | 'timeout' | 'content_type' | 'too_many_redirects' | 'network',
    url: string,
    message: string,
  ) {
    super(code, message, { url: redact(url) });
    this.name = 'ResponseRefusedError';
  }

  static is(value: unknown): value is ResponseRefusedError {
    return value instanceof ResponseRefusedError;
  }
}

/** Hides credentials in query strings (API keys) and userinfo before a URL goes into a message. */
export function redact(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.username || parsed.password) {
      parsed.username = '';
      parsed.password = '';
    }
    for (const key of [...parsed.searchParams.keys()]) {
      if (/key|token|appid|secret|auth/i.test(key)) parsed.searchParams.set(key, '***');
    }
    return parsed.toString();
  } catch {
    return url.slice(0, 200);
  }
}

function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return 'the server';
  }
}
