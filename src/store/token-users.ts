import { createHash, randomBytes, scrypt, timingSafeEqual } from 'node:crypto';
import { promisify } from 'node:util';
import { UserError } from '../core/errors.ts';
import type { UserRecord, UserStore } from './user-store.ts';

const scryptAsync = promisify(scrypt) as (
  password: string,
  salt: Buffer,
  length: number,
  options: { N: number; r: number; p: number; maxmem: number },
) => Promise<Buffer>;

const NAME = /^[a-z0-9][a-z0-9._-]{0,63}$/i;
/** scrypt cost: ~50 ms per check on a laptop core; verified tokens are remembered, so that is paid once. */
const SCRYPT = { N: 16384, r: 8, p: 1, maxmem: 64 * 1024 * 1024 };
const KEY_LENGTH = 32;
/** A hash no secret matches (its salt and hash are random), checked for ids that have no row. */
const UNKNOWN_USER_HASH = `scrypt$${SCRYPT.N}$${SCRYPT.r}$${SCRYPT.p}$${randomBytes(16).toString('base64url')}$${randomBytes(KEY_LENGTH).toString('base64url')}`;

/** The rows of the `users` table a backend reads and writes for `TokenUserStore`. */
export interface UserRows {
  /** Adds a user with a token; false when the name is taken. */
  insert(row: { id: string; name: string; tokenHash: string; createdAt: number }): Promise<boolean>;
  /** Users with a token, by name. */
  list(): Promise<Array<{ id: string; name: string; createdAt: number }>>;
  /** Removes a user with a token by name; false when there is none. */
  remove(name: string): Promise<boolean>;
  hasTokens(): Promise<boolean>;
  byId(
    id: string,
  ): Promise<{ id: string; name: string; tokenHash: string | null; createdAt: number } | undefined>;
}

/**
 * Server users and their tokens over any backend's rows. A token is `cadre_<user key>_<secret>`: the key
 * finds the user's row, and the secret is checked against its scrypt hash (with a per-user salt). Checked
 * tokens are remembered by their SHA-256 (never the token itself), and each use re-reads the row, so
 * removing a user takes effect at once.
 */
export class TokenUserStore implements UserStore {
  #rows: UserRows;
  #verified = new Map<string, { id: string; hash: string }>();

  constructor(rows: UserRows) {
    this.#rows = rows;
  }

  async add(name: string): Promise<{ user: UserRecord; token: string }> {
    if (!NAME.test(name))
      throw new UserError(
        'bad_user_name',
        `${shownName(name)} is not a usable user name: use ASCII letters, digits, ".", "_" or "-" (up to 64).`,
        { name: name.slice(0, 200) },
      );
    if (name === 'local')
      throw new UserError('bad_user_name', 'The name "local" is reserved for the built-in user.', { name });
    const key = randomBytes(9).toString('base64url');
    const secret = randomBytes(32).toString('base64url');
    const salt = randomBytes(16);
    const hash = await scryptAsync(secret, salt, KEY_LENGTH, SCRYPT);
    const stored = `scrypt$${SCRYPT.N}$${SCRYPT.r}$${SCRYPT.p}$${salt.toString('base64url')}$${hash.toString('base64url')}`;
    const id = `usr_${key}`;
    const now = Date.now();
    if (!(await this.#rows.insert({ id, name, tokenHash: stored, createdAt: now })))
      throw new UserError('user_exists', `There is already a user named "${name}".`, { name });
    return { user: { id, name, createdAt: new Date(now).toISOString() }, token: `cadre_${key}_${secret}` };
  }

  async list(): Promise<UserRecord[]> {
    const rows = await this.#rows.list();
    return rows.map((row) => ({
      id: row.id,
      name: row.name,
      createdAt: new Date(row.createdAt).toISOString(),
    }));
  }

  remove(name: string): Promise<boolean> {
    return this.#rows.remove(name);
  }

  hasTokens(): Promise<boolean> {
    return this.#rows.hasTokens();
  }

  async verify(token: string, options: { spareUnknownIds?: boolean } = {}): Promise<UserRecord | undefined> {
    const match = /^cadre_([A-Za-z0-9_-]{12})_([A-Za-z0-9_-]{43})$/.exec(token);
    if (!match) return undefined;
    const id = `usr_${match[1]}`;
    const row = await this.#rows.byId(id);
    if (!row?.tokenHash) {
      if (options.spareUnknownIds) return undefined;
      // The same scrypt work as for a known id, so the answer's time does not tell whether the id exists.
      await secretMatches(match[2]!, UNKNOWN_USER_HASH);
      return undefined;
    }
    const user = { id: row.id, name: row.name, createdAt: new Date(row.createdAt).toISOString() };
    const fingerprint = createHash('sha256').update(token).digest('base64url');
    const known = this.#verified.get(fingerprint);
    if (known && known.id === row.id && known.hash === row.tokenHash) return user;
    if (!(await secretMatches(match[2]!, row.tokenHash))) return undefined;
    if (this.#verified.size > 10_000) this.#verified.clear();
    this.#verified.set(fingerprint, { id: row.id, hash: row.tokenHash });
    return user;
  }
}

async function secretMatches(secret: string, stored: string): Promise<boolean> {
  const [scheme, n, r, p, salt, hash] = stored.split('$');
  if (scheme !== 'scrypt' || !salt || !hash) return false;
  const expected = Buffer.from(hash, 'base64url');
  const actual = await scryptAsync(secret, Buffer.from(salt, 'base64url'), expected.length, {
    N: Number(n),
    r: Number(r),
    p: Number(p),
    maxmem: SCRYPT.maxmem,
  });
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}

/**
 * A refused name as the message shows it: quoted with its control characters escaped (a newline or an
 * escape sequence stays visible instead of acting on the terminal) and cut after 64 characters (a pasted
 * 10 KB blob is not echoed back whole).
 */
function shownName(name: string): string {
  return JSON.stringify(name.length > 64 ? `${name.slice(0, 64)}…` : name);
}
