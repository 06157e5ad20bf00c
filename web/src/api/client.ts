/**
 * The HTTP API as the page uses it: every request carries the token (when the server asks for one), and
 * a failed request becomes an `ApiError` holding the server's own message, so each view can show it where
 * the failure happened.
 */

const TOKEN_KEY = 'cadre.token';

/**
 * What the page says when the server cannot be reached, wherever that happens (the chat, the sidebar, the
 * panels): the browser's own words ("Failed to fetch", "NetworkError…") only in brackets.
 */
export function unreachableMessage(detail?: string): string {
  return `Cadre's server could not be reached${detail ? ` (${detail})` : ''}. Is \`cadre serve\` still running?`;
}

/** The browser's words for a request that never reached a server (Chromium, Firefox, Safari, Node). */
export function isNetworkFailure(message: string): boolean {
  return /failed to fetch|networkerror|network error|load failed|fetch failed|network connection was lost/i.test(
    message,
  );
}

/** A request the server refused or could not answer; `status` 0 means it was never reached. */
export class ApiError extends Error {
  readonly status: number;
  readonly code: string | undefined;
  constructor(status: number, message: string, code?: string) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
    this.code = code;
  }
}

export function getToken(): string | null {
  try {
    return localStorage.getItem(TOKEN_KEY);
  } catch {
    return null;
  }
}

export function setToken(token: string | null): void {
  if (token) localStorage.setItem(TOKEN_KEY, token);
  else localStorage.removeItem(TOKEN_KEY);
}

/** Headers every API request carries (for `token`, the one held now unless told). */
export function authHeaders(token: string | null = getToken()): Record<string, string> {
  return token ? { authorization: `Bearer ${token}` } : {};
}

const unauthorizedListeners = new Set<() => void>();

/** Called whenever the server answers 401 (no token, or a wrong one). */
export function onUnauthorized(listener: () => void): () => void {
  unauthorizedListeners.add(listener);
  return () => unauthorizedListeners.delete(listener);
}

/** The server refused the token `sent` (null: none): the page asks for one if that is the token it holds. */
function refused(sent: string | null): void {
  if (sent === getToken()) for (const listener of unauthorizedListeners) listener();
}

/**
 * Reads an error body in any of the shapes the server uses: `{error: {message, code}}` or `{error: "..."}`.
 * A 401 asks for a token only when it refused the token the page holds now (`sent`): a request sent
 * before signing in, or with a token since replaced, can be answered after the new one was given, and
 * must not send the person back to the sign-in page.
 */
export async function errorFromResponse(response: Response, sent: string | null): Promise<ApiError> {
  if (response.status === 401 && sent === getToken())
    for (const listener of unauthorizedListeners) listener();
  let message = `${response.status} ${response.statusText}`.trim();
  let code: string | undefined;
  try {
    const body = (await response.json()) as { error?: unknown; message?: unknown; code?: unknown };
    const error = body.error;
    if (typeof error === 'string') message = error;
    else if (error && typeof error === 'object') {
      const fields = error as { message?: unknown; code?: unknown };
      if (typeof fields.message === 'string') message = fields.message;
      if (typeof fields.code === 'string') code = fields.code;
    } else if (typeof body.message === 'string') message = body.message;
    if (typeof body.code === 'string') code = body.code;
  } catch {
    // Not JSON: the status line says enough.
  }
  return new ApiError(response.status, message, code);
}

/**
 * `fetch` for requests a library makes with the token (the chat's stream): a 401 asks for a token, as
 * one to `apiFetch` does, instead of showing as a failed answer. The response is the library's to read.
 */
export const fetchAskingForToken: typeof fetch = async (input, init) => {
  const sent = getToken();
  const response = await fetch(input, init);
  if (response.status === 401) refused(sent);
  return response;
};

/** `fetch` with the token; throws ApiError on failure. */
export async function apiFetch(path: string, init: RequestInit = {}): Promise<Response> {
  const token = getToken();
  let response: Response;
  try {
    response = await fetch(path, { ...init, headers: { ...authHeaders(token), ...(init.headers ?? {}) } });
  } catch (error) {
    throw new ApiError(0, unreachableMessage((error as Error).message));
  }
  if (!response.ok) throw await errorFromResponse(response, token);
  return response;
}

/** A JSON request; `body` is sent as JSON when given. */
export async function apiJson<T>(path: string, init: RequestInit & { json?: unknown } = {}): Promise<T> {
  const { json, ...rest } = init;
  const response = await apiFetch(path, {
    ...rest,
    ...(json === undefined
      ? {}
      : { body: JSON.stringify(json), headers: { 'content-type': 'application/json' } }),
  });
  if (response.status === 204) return undefined as T;
  return (await response.json()) as T;
}
