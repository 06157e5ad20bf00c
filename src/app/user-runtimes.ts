import { randomUUID } from 'node:crypto';
import type { SettingsStore } from '../store/store.ts';

/** The settings scope holding each user's revision: a token that changes whenever what composes them does. */
const REVISION_SCOPE = 'runtime-revision';
/** The most compositions kept per user (one per agent catalog a tree was asked with, usually one). */
const PER_USER = 4;
/** The most users whose compositions are kept at once; the least recently used goes first. */
const USERS = 256;

/**
 * Each user's composed agents (and whatever else is built from their settings, documents and the agent
 * catalog), built once and built again only when one of those changed. A change anywhere (this process,
 * a terminal on the same file, a server beside a worker on the same database) writes a new revision for the
 * user; every process reads that one value per request and rebuilds only when it differs from the one it
 * built with. A build fails without being kept: the next request tries again.
 */
export class UserCompositions<T> {
  readonly #settings: SettingsStore;
  readonly #build: (userId: string) => Promise<T>;
  readonly #users = new Map<string, { revision: string; built: Map<string, Promise<T>> }>();

  constructor(settings: SettingsStore, build: (userId: string) => Promise<T>) {
    this.#settings = settings;
    this.#build = build;
  }

  /**
   * The user's composition, built now only if it changed. `key` and `build` name another composition of
   * theirs (agents a tree's asker composed elsewhere), kept beside it under the same revision.
   */
  async get(userId: string, key = '', build = () => this.#build(userId)): Promise<T> {
    const catalogKey = key;
    const revision = String((await this.#settings.get(REVISION_SCOPE, userId)) ?? '');
    let entry = this.#users.get(userId);
    if (!entry || entry.revision !== revision) {
      entry = { revision, built: new Map() };
    }
    // Most recently used last: the first key of each map is the one to drop.
    this.#users.delete(userId);
    this.#users.set(userId, entry);
    if (this.#users.size > USERS) this.#users.delete(this.#users.keys().next().value as string);
    let built = entry.built.get(catalogKey);
    if (!built) {
      built = build();
      entry.built.set(catalogKey, built);
      if (entry.built.size > PER_USER) entry.built.delete(entry.built.keys().next().value as string);
      const kept = entry;
      built.catch(() => {
        if (kept.built.get(catalogKey) === built) kept.built.delete(catalogKey);
      });
    } else {
      entry.built.delete(catalogKey);
      entry.built.set(catalogKey, built);
    }
    return built;
  }

  /**
   * What composes `userId` changed (their settings, their documents): every process builds their runtime
   * again at its next request. Written before the change is answered, so the person's next question sees it.
   */
  async changed(userId: string): Promise<void> {
    this.#users.delete(userId);
    await this.#settings.put(REVISION_SCOPE, userId, randomUUID());
  }
}
