/**
 * Reads `read` until it gives a value, up to `ms`: for state another process changes that sends this test
 * no event (its stored rows, a fixture server's requests). Throws naming `what` when the time is up.
 */
export async function eventually<T>(
  read: () => Promise<T | undefined>,
  what: string,
  ms = 30_000,
): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    const value = await read();
    if (value !== undefined) return value;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 150));
  }
}
