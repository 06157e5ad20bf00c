import { openSqliteStore } from './sqlite/sqlite-store.ts';
import type { Store } from './store.ts';

/** Where Cadre's data lives. */
export interface StoreLocation {
  /** The embedded SQLite file (`$CADRE_HOME/cadre.db`), or `:memory:`. */
  file: string;
}

/**
 * Opens the store a configuration names: the one place outside a backend's folder that knows which
 * backends exist, so the composition root (`app/`) depends on the interfaces alone.
 */
export async function openStore(location: StoreLocation): Promise<Store> {
  return openSqliteStore(location.file);
}
