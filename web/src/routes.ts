/** The address names the session: `/s/ID`. The home page `/` is a new chat. */
export function sessionIdFromLocation(): string | undefined {
  const match = /^\/s\/([^/]+)\/?$/.exec(window.location.pathname);
  return match ? decodeURIComponent(match[1]!) : undefined;
}

export function sessionPath(id: string): string {
  return `/s/${encodeURIComponent(id)}`;
}

/** A fresh session id for a new chat (the server creates the session on its first message). */
export function newSessionId(): string {
  // crypto.randomUUID exists only in secure contexts; a server reached over plain HTTP on a LAN is not one.
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return Array.from(bytes, (byte) => byte.toString(16).padStart(2, '0')).join('');
}
