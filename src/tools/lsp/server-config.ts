import { createRequire } from 'node:module';
import path from 'node:path';

/** How to start a language server over stdio, and which files it serves. */
export interface LanguageServerConfig {
  /** A short name for messages, e.g. "typescript". */
  name: string;
  /** The program and its arguments; the server must speak LSP on stdin/stdout. */
  command: string[];
  /** File extensions (with the dot) this server answers for. */
  extensions: string[];
  /** The LSP languageId of a file, by its extension. */
  languageId: (extension: string) => string;
  /** Sent as `initializationOptions`. */
  initializationOptions?: Record<string, unknown>;
}

const TYPESCRIPT_IDS: Record<string, string> = {
  '.ts': 'typescript',
  '.mts': 'typescript',
  '.cts': 'typescript',
  '.tsx': 'typescriptreact',
  '.js': 'javascript',
  '.mjs': 'javascript',
  '.cjs': 'javascript',
  '.jsx': 'javascriptreact',
};

/**
 * typescript-language-server, started with the running Node and the TypeScript this package depends on,
 * so it works in a workspace that has no node_modules of its own.
 */
export function typescriptServer(): LanguageServerConfig {
  const require = createRequire(import.meta.url);
  const packageJson = require.resolve('typescript-language-server/package.json');
  const cli = path.join(path.dirname(packageJson), 'lib', 'cli.mjs');
  return {
    name: 'typescript',
    command: [process.execPath, cli, '--stdio'],
    extensions: Object.keys(TYPESCRIPT_IDS),
    languageId: (extension) => TYPESCRIPT_IDS[extension] ?? 'typescript',
    initializationOptions: {
      tsserver: { path: require.resolve('typescript/lib/tsserver.js') },
      preferences: { includeCompletionsForModuleExports: false },
    },
  };
}

/** A server configured by the user: `{name, command, extensions, languageId?}`. */
export function configuredServer(config: {
  name: string;
  command: string[];
  extensions: string[];
  languageId?: string | undefined;
}): LanguageServerConfig {
  return {
    name: config.name,
    command: config.command,
    extensions: config.extensions,
    languageId: () => config.languageId ?? config.name,
  };
}
