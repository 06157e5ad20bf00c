import type { UserRecord, UserStore } from '../store/user-store.ts';

export type { UserRecord, UserStore };

/** Adds a server user; the token is returned this once (only its hash is kept). */
export function addUser(users: UserStore, name: string): Promise<{ user: UserRecord; token: string }> {
  return users.add(name);
}

/** Server users with tokens, by name. */
export function listUsers(users: UserStore): Promise<UserRecord[]> {
  return users.list();
}

/** Removes a user (their sessions go with them); false when there is no such user. */
export function removeUser(users: UserStore, name: string): Promise<boolean> {
  return users.remove(name);
}
