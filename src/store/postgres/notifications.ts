import pg from 'pg';
import type { ChangeSignal } from '../sql/change-signal.ts';
import { type Queryable, sessionName } from './database.ts';

type Listener = (payload: string) => void;

/** How long to wait before connecting again after the listening connection was lost. */
const RECONNECT_MS = [100, 250, 500, 1_000, 2_000];

/**
 * PostgreSQL's LISTEN/NOTIFY for one process: one dedicated connection listens on every channel anyone
 * here follows, and hands each notification to its listeners. Channels are named after Cadre's schema, so
 * stores in different schemas of one database never hear each other. When the connection is lost (the
 * database restarted) it connects again, listens again, and tells every listener `*`: whatever was said
 * meanwhile was missed, so look again.
 */
export class Notifications {
  #url: string;
  #prefix: string;
  #client: pg.Client | undefined;
  #connecting: Promise<pg.Client> | undefined;
  #listeners = new Map<string, Set<Listener>>();
  #closed = false;
  #failures = 0;

  constructor(url: string, schema: string) {
    this.#url = url;
    this.#prefix = `cadre_${schema}`.slice(0, 40);
  }

  /** The channel's name in the database. */
  channel(name: string): string {
    return `${this.#prefix}_${name}`;
  }

  /** Sends `payload` on channel `name` through `db` (inside a transaction it goes out at commit). */
  async notify(db: Queryable, name: string, payload: string): Promise<void> {
    await db.query('SELECT pg_notify($1, $2)', [this.channel(name), payload]);
  }

  /** Calls `listener` with every payload sent on `name` from now on; resolves once listening. */
  async listen(name: string, listener: Listener): Promise<() => void> {
    const channel = this.channel(name);
    let listeners = this.#listeners.get(channel);
    const first = !listeners;
    if (!listeners) {
      listeners = new Set();
      this.#listeners.set(channel, listeners);
    }
    listeners.add(listener);
    const client = await this.#connect();
    if (first) await client.query(`LISTEN ${channel}`);
    return () => {
      listeners.delete(listener);
    };
  }

  async close(): Promise<void> {
    this.#closed = true;
    const client = this.#client;
    this.#client = undefined;
    await client?.end().catch(() => {});
  }

  #connect(): Promise<pg.Client> {
    if (this.#client) return Promise.resolve(this.#client);
    this.#connecting ??= (async () => {
      try {
        const client = new pg.Client({
          connectionString: this.#url,
          keepAlive: true,
          application_name: sessionName(),
        });
        client.on('notification', (message) => {
          for (const listener of this.#listeners.get(message.channel) ?? []) listener(message.payload ?? '');
        });
        client.on('error', () => this.#lost(client));
        client.on('end', () => this.#lost(client));
        await client.connect();
        for (const channel of this.#listeners.keys()) await client.query(`LISTEN ${channel}`);
        this.#client = client;
        this.#failures = 0;
        return client;
      } finally {
        this.#connecting = undefined;
      }
    })();
    return this.#connecting;
  }

  #lost(client: pg.Client): void {
    if (this.#client !== client) return;
    this.#client = undefined;
    client.end().catch(() => {});
    if (this.#closed) return;
    const retry = () => {
      if (this.#closed || !this.#listeners.size) return;
      this.#connect().then(
        () => {
          for (const listeners of this.#listeners.values()) for (const listener of listeners) listener('*');
        },
        () => {
          this.#failures++;
          setTimeout(retry, RECONNECT_MS[Math.min(this.#failures, RECONNECT_MS.length - 1)]).unref();
        },
      );
    };
    setTimeout(retry, RECONNECT_MS[0]).unref();
  }
}

/**
 * A signal to every process on the database: listeners here are called at once, and the others hear it
 * through NOTIFY on channel `name` (this process hears its own too: once more is harmless).
 */
export class NotifySignal implements ChangeSignal {
  readonly #db: Queryable;
  readonly #notifications: Notifications;
  readonly #name: string;
  readonly #listeners = new Set<() => void>();
  #unlisten: Promise<() => void> | undefined;

  constructor(db: Queryable, notifications: Notifications, name: string) {
    this.#db = db;
    this.#notifications = notifications;
    this.#name = name;
  }

  announce(): void {
    for (const listener of [...this.#listeners]) listener();
    void this.#notifications.notify(this.#db, this.#name, '').catch(() => {});
  }

  watch(onChange: () => void): () => void {
    const own = () => onChange();
    this.#listeners.add(own);
    // One LISTEN for every watcher here; after a lost connection it hears `*`: look again then too.
    this.#unlisten ??= this.#notifications
      .listen(this.#name, () => {
        for (const listener of [...this.#listeners]) listener();
      })
      .catch(() => () => {});
    // Once listening, a first look: what another process said before that was not heard.
    void this.#unlisten.then(() => {
      if (this.#listeners.has(own)) own();
    });
    return () => {
      this.#listeners.delete(own);
      if (this.#listeners.size) return;
      const unlisten = this.#unlisten;
      this.#unlisten = undefined;
      void unlisten?.then((stop) => stop());
    };
  }
}
