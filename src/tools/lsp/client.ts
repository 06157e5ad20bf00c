import { type ChildProcess, spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import {
  createMessageConnection,
  type MessageConnection,
  StreamMessageReader,
  StreamMessageWriter,
} from 'vscode-jsonrpc/node';
import { SystemError } from '../../core/errors.ts';
import type { LanguageServerConfig } from './server-config.ts';

const REQUEST_TIMEOUT_MS = 30_000;
/** Diagnostics arrive in pieces (syntax, semantic, suggestions); they are final once quiet this long. */
const DIAGNOSTICS_QUIET_MS = 300;

export interface LspPosition {
  line: number;
  character: number;
}
export interface LspRange {
  start: LspPosition;
  end: LspPosition;
}
export interface LspDiagnostic {
  range: LspRange;
  severity?: number;
  code?: string | number;
  source?: string;
  message: string;
}

interface OpenDocument {
  version: number;
  text: string;
}

/**
 * One language server process for one workspace root, spoken to with JSON-RPC over stdio. It opens
 * documents on demand (re-sending them when the file changed on disk) and collects pushed diagnostics.
 */
export class LspClient {
  readonly root: string;
  readonly config: LanguageServerConfig;
  #process: ChildProcess | undefined;
  #connection: MessageConnection | undefined;
  #ready: Promise<void> | undefined;
  #documents = new Map<string, OpenDocument>();
  #diagnostics = new Map<string, { version: number; items: LspDiagnostic[] }>();
  #diagnosticWaiters = new Set<() => void>();
  #stderr = '';
  #exited = false;

  constructor(root: string, config: LanguageServerConfig) {
    this.root = root;
    this.config = config;
  }

  get running(): boolean {
    return this.#ready !== undefined && !this.#exited;
  }

  /** True once the server process has gone (stopped, crashed or killed). */
  get exited(): boolean {
    return this.#exited;
  }

  /** Starts the server and runs the initialize handshake, once. */
  start(): Promise<void> {
    this.#ready ??= this.#start();
    return this.#ready;
  }

  async #start(): Promise<void> {
    const [program, ...args] = this.config.command;
    if (!program)
      throw new SystemError('lsp_unavailable', `language server "${this.config.name}" has no command`);
    const child = spawn(program, args, { cwd: this.root, stdio: ['pipe', 'pipe', 'pipe'] });
    this.#process = child;
    // The process and its pipes never keep Cadre alive by themselves; pending requests do (their timers).
    child.unref();
    for (const stream of [child.stdin, child.stdout, child.stderr])
      (stream as { unref?: () => void }).unref?.();
    child.stderr.on('data', (chunk: Buffer) => {
      this.#stderr = (this.#stderr + chunk.toString()).slice(-4000);
    });
    const spawned = new Promise<void>((resolve, reject) => {
      child.once('spawn', resolve);
      child.once('error', reject);
    });
    child.once('exit', () => {
      this.#exited = true;
      this.#connection?.dispose();
    });
    await spawned;
    const connection = createMessageConnection(
      new StreamMessageReader(child.stdout),
      new StreamMessageWriter(child.stdin),
    );
    this.#connection = connection;
    connection.onNotification(
      'textDocument/publishDiagnostics',
      (params: { uri: string; version?: number; diagnostics: LspDiagnostic[] }) => {
        const previous = this.#diagnostics.get(params.uri);
        this.#diagnostics.set(params.uri, {
          version: (previous?.version ?? 0) + 1,
          items: params.diagnostics,
        });
        for (const wake of this.#diagnosticWaiters) wake();
      },
    );
    connection.onRequest('workspace/configuration', (params: { items: unknown[] }) =>
      params.items.map(() => null),
    );
    connection.onRequest('client/registerCapability', () => null);
    connection.onRequest('window/workDoneProgress/create', () => null);
    connection.listen();
    const rootUri = pathToFileURL(this.root).href;
    await this.#request('initialize', {
      processId: process.pid,
      rootUri,
      workspaceFolders: [{ uri: rootUri, name: path.basename(this.root) }],
      capabilities: {
        textDocument: {
          synchronization: { didSave: false, dynamicRegistration: false },
          publishDiagnostics: { relatedInformation: false },
          hover: { contentFormat: ['markdown', 'plaintext'] },
          definition: { linkSupport: false },
          references: {},
          completion: { completionItem: { snippetSupport: false, documentationFormat: ['plaintext'] } },
        },
        workspace: { workspaceFolders: true, configuration: true },
      },
      initializationOptions: this.config.initializationOptions ?? {},
    });
    await connection.sendNotification('initialized', {});
  }

  /** Makes the server see the file's current text; returns its URI. */
  async sync(absolute: string): Promise<string> {
    await this.start();
    const uri = pathToFileURL(absolute).href;
    const text = await readFile(absolute, 'utf8');
    const open = this.#documents.get(uri);
    const connection = this.#connection!;
    if (!open) {
      this.#documents.set(uri, { version: 1, text });
      await connection.sendNotification('textDocument/didOpen', {
        textDocument: { uri, languageId: this.config.languageId(path.extname(absolute)), version: 1, text },
      });
    } else if (open.text !== text) {
      open.version++;
      open.text = text;
      this.#diagnostics.delete(uri);
      await connection.sendNotification('textDocument/didChange', {
        textDocument: { uri, version: open.version },
        contentChanges: [{ text }],
      });
    }
    return uri;
  }

  /** The file's diagnostics once the server has published them and gone quiet for a moment. */
  async diagnostics(absolute: string): Promise<LspDiagnostic[]> {
    const uri = await this.sync(absolute);
    const deadline = Date.now() + REQUEST_TIMEOUT_MS;
    return new Promise<LspDiagnostic[]>((resolve, reject) => {
      let quiet: NodeJS.Timeout | undefined;
      const done = (error?: Error) => {
        clearTimeout(quiet);
        clearTimeout(overall);
        this.#diagnosticWaiters.delete(wake);
        const entry = this.#diagnostics.get(uri);
        if (error && !entry) reject(error);
        else resolve(entry?.items ?? []);
      };
      const wake = () => {
        if (!this.#diagnostics.has(uri)) return;
        clearTimeout(quiet);
        quiet = setTimeout(() => done(), DIAGNOSTICS_QUIET_MS);
      };
      const overall = setTimeout(
        () =>
          done(
            new SystemError(
              'lsp_unavailable',
              `${this.config.name} language server sent no diagnostics in time`,
            ),
          ),
        Math.max(0, deadline - Date.now()),
      );
      this.#diagnosticWaiters.add(wake);
      wake();
    });
  }

  /** Sends a request about a position in a file (0-based line and UTF-16 character). */
  async positionRequest(
    method: string,
    absolute: string,
    position: LspPosition,
    extra: Record<string, unknown> = {},
  ) {
    const uri = await this.sync(absolute);
    return this.#request(method, { textDocument: { uri }, position, ...extra });
  }

  async #request(method: string, params: unknown): Promise<any> {
    const connection = this.#connection;
    if (!connection || this.#exited)
      throw new SystemError(
        'lsp_unavailable',
        `${this.config.name} language server is not running${this.#lastError()}`,
      );
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () =>
          reject(
            new SystemError(
              'lsp_unavailable',
              `${this.config.name} language server did not answer ${method} in time`,
            ),
          ),
        REQUEST_TIMEOUT_MS,
      );
    });
    try {
      return await Promise.race([connection.sendRequest(method, params), timeout]);
    } catch (error) {
      throw new SystemError(
        'lsp_unavailable',
        `${this.config.name} language server: ${(error as Error).message}${this.#lastError()}`,
      );
    } finally {
      clearTimeout(timer);
    }
  }

  #lastError(): string {
    const tail = this.#stderr.trim().split('\n').slice(-3).join(' | ');
    return tail ? ` (stderr: ${tail})` : '';
  }

  /** Asks the server to shut down, then makes sure the process is gone. */
  async stop(): Promise<void> {
    const child = this.#process;
    if (!child || this.#exited) return;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    try {
      await Promise.race([
        this.#request('shutdown', null),
        new Promise((resolve) => setTimeout(resolve, 2_000)),
      ]);
      await this.#connection?.sendNotification('exit');
    } catch {
      // A server that cannot shut down cleanly is killed below.
    }
    const kill = setTimeout(() => child.kill('SIGKILL'), 2_000);
    await exited;
    clearTimeout(kill);
  }

  /** Synchronous last resort when Cadre itself exits. */
  kill(): void {
    if (!this.#exited) this.#process?.kill('SIGKILL');
  }
}
