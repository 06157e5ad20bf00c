import path from 'node:path';
import { SystemError } from '../../core/errors.ts';
import type { LspClient } from './client.ts';
import { type LanguageServerConfig, typescriptServer } from './server-config.ts';

const DEFAULT_IDLE_MS = 5 * 60_000;

export interface LspManagerOptions {
  /** Servers by the files they serve; defaults to typescript-language-server for TS/JS. */
  servers?: LanguageServerConfig[];
  /** A server unused this long is shut down; the next request starts it again. */
  idleMs?: number;
}

const live = new Set<LspManager>();
let exitHookInstalled = false;

/**
 * Starts language servers on demand, one per workspace root and language, and stops each after it has
 * been idle for a while. The LSP tools ask it for the client that serves a file.
 */
export class LspManager {
  readonly servers: LanguageServerConfig[];
  readonly idleMs: number;
  #clients = new Map<string, { client: LspClient; idle?: NodeJS.Timeout; busy: number }>();

  constructor(options: LspManagerOptions = {}) {
    this.servers = options.servers ?? [typescriptServer()];
    this.idleMs = options.idleMs ?? DEFAULT_IDLE_MS;
    live.add(this);
    if (!exitHookInstalled) {
      exitHookInstalled = true;
      process.once('exit', () => {
        for (const manager of live) manager.killAll();
      });
    }
  }

  /** The server config for a file, or an error naming the extensions that are served. */
  serverFor(file: string): LanguageServerConfig {
    const extension = path.extname(file).toLowerCase();
    const server = this.servers.find((candidate) => candidate.extensions.includes(extension));
    if (!server) {
      const served = this.servers.flatMap((candidate) => candidate.extensions).join(', ');
      throw new SystemError(
        'lsp_unavailable',
        `no language server is configured for "${extension || file}" files (served: ${served})`,
      );
    }
    return server;
  }

  /** Runs `work` with the client for `file` in `root`, starting it if needed and keeping it alive meanwhile. */
  async use<T>(root: string, file: string, work: (client: LspClient) => Promise<T>): Promise<T> {
    const server = this.serverFor(file);
    // The JSON-RPC client loads with the first language server, not with every command's tool list.
    const { LspClient } = await import('./client.ts');
    const key = `${server.name}\0${root}`;
    let entry = this.#clients.get(key);
    if (!entry || (entry.client.exited && entry.busy === 0)) {
      entry = { client: new LspClient(root, server), busy: 0 };
      this.#clients.set(key, entry);
    }
    clearTimeout(entry.idle);
    entry.idle = undefined;
    entry.busy++;
    try {
      return await work(entry.client);
    } finally {
      entry.busy--;
      if (entry.busy === 0) this.#scheduleStop(key, entry);
    }
  }

  /** Whether a server is running for this root and language (for tests and status displays). */
  isRunning(root: string, serverName = this.servers[0]?.name ?? ''): boolean {
    return this.#clients.get(`${serverName}\0${root}`)?.client.running ?? false;
  }

  #scheduleStop(key: string, entry: { client: LspClient; idle?: NodeJS.Timeout; busy: number }) {
    entry.idle = setTimeout(() => {
      if (this.#clients.get(key) === entry) this.#clients.delete(key);
      void entry.client.stop();
    }, this.idleMs);
    entry.idle.unref();
  }

  /** Stops every server now. */
  async stopAll(): Promise<void> {
    const entries = [...this.#clients.values()];
    this.#clients.clear();
    for (const entry of entries) clearTimeout(entry.idle);
    await Promise.all(entries.map((entry) => entry.client.stop()));
    live.delete(this);
  }

  killAll(): void {
    for (const entry of this.#clients.values()) entry.client.kill();
  }
}
