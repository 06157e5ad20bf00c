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
  /**
   * The user a bearer token belongs to, or undefined. `spareUnknownIds`: a token whose id has no user is
   * refused without the hash work that otherwise makes its answer as slow as a wrong secret's (for
   * callers already refusing the sender, where the time saved matters more than what it tells).
   */
  verify(token: string, options?: { spareUnknownIds?: boolean }): Promise<UserRecord | undefined>;
  /** True when at least one user has a token (the server then requires one). */
  hasTokens(): Promise<boolean>;
}
