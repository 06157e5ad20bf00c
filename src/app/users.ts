import type { UserRecord, UserStore } from '../store/user-store.ts';
import type { Cadre } from './create-cadre.ts';

export type { UserRecord, UserStore };

/** Adds a server user; the token is returned this once (only its hash is kept). */
export function addUser(cadre: Cadre, name: string): Promise<{ user: UserRecord; token: string }> {
  return cadre.users.add(name);
}

/** Server users with tokens, by name. */
export function listUsers(cadre: Cadre): Promise<UserRecord[]> {
  return cadre.users.list();
}

/** Removes a user (their sessions go with them); false when there is no such user. */
export function removeUser(cadre: Cadre, name: string): Promise<boolean> {
  return cadre.users.remove(name);
}
