import type { Store } from './store.ts';

/** Where Cadre's data lives. */
export interface StoreLocation {
  /** The embedded SQLite file (`$CADRE_HOME/cadre.db`), or `:memory:`. */
  file: string;
  /** A `postgres://` (or `postgresql://`) URL: the PostgreSQL store instead of the file. */
  databaseUrl?: string | undefined;
}

/**
 * Opens the store a configuration names: the one place outside a backend's folder that knows which
 * backends exist, so the composition root (`app/`) depends on the interfaces alone. Each backend is
 * loaded only when chosen: the embedded mode never loads the PostgreSQL client.
 */
export async function openStore(location: StoreLocation): Promise<Store> {
  if (location.databaseUrl) {
    const { openPostgresStore } = await import('./postgres/postgres-store.ts');
    return openPostgresStore(location.databaseUrl);
  }
  const { openSqliteStore } = await import('./sqlite/sqlite-store.ts');
  return openSqliteStore(location.file);
}
