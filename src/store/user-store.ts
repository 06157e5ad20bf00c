/** A person (or program) with a server token. The built-in `local` user has none. */
export interface UserRecord {
  id: string;
  name: string;
  createdAt: string;
}

/** Server users and their tokens. Only a hash of each token is kept; the token is shown once, at `add`. */
export interface UserStore {
  add(name: string): Promise<{ user: UserRecord; token: string }>;
  list(): Promise<UserRecord[]>;
  remove(name: string): Promise<boolean>;
  /** The user a bearer token belongs to, or undefined. */
  verify(token: string): Promise<UserRecord | undefined>;
  /** True when at least one user has a token (the server then requires one). */
  hasTokens(): Promise<boolean>;
}
