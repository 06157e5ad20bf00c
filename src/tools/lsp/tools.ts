import { readFile, realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { ModelBehaviorError } from '../../core/errors.ts';
import { type CadreTool, defineTool } from '../../core/tool.ts';
import type { Workspace } from '../workspace/confine.ts';
import type { LspDiagnostic, LspRange } from './client.ts';
import type { LspManager } from './manager.ts';

const MAX_LOCATIONS = 100;
const MAX_DIAGNOSTICS = 200;
const SEVERITY = ['', 'error', 'warning', 'information', 'hint'];
const MAX_FILE_BYTES = 5 * 1024 * 1024;

const pathInput = z.string().min(1).max(1000).describe('File path relative to the workspace root');
const positionInput = z.object({
  path: pathInput,
  line: z.number().int().min(1).describe('1-based line number'),
  column: z.number().int().min(1).describe('1-based column (character in the line)'),
});

/** lsp_diagnostics, lsp_definition, lsp_references, lsp_hover and lsp_completions for one workspace. */
export function lspTools(workspace: Workspace, manager: LspManager): CadreTool[] {
  const locate = (location: { uri: string; range: LspRange }) => describeLocation(workspace, location);
  /** One position request (definition, references, hover) for a workspace file. */
  const atPosition = async (
    method: string,
    { path: requested, line, column }: z.infer<typeof positionInput>,
    params?: Record<string, unknown>,
  ) => {
    const file = await servedFile(workspace, requested);
    return manager.use(workspace.root, file.absolute, (client) =>
      client.positionRequest(method, file.absolute, toPosition(line, column), params),
    );
  };

  return [
    defineTool({
      name: 'lsp_diagnostics',
      family: 'workspace',
      description:
        'Type errors, warnings and hints for one file from the language server (TypeScript/JavaScript by ' +
        'default), as the editor would show them: 1-based line and column, severity, message, code.',
      input: z.object({ path: pathInput }),
      async execute({ path: requested }) {
        const file = await servedFile(workspace, requested);
        const diagnostics = await manager.use(workspace.root, file.absolute, (client) =>
          client.diagnostics(file.absolute),
        );
        return {
          path: file.relative,
          diagnostics: diagnostics.slice(0, MAX_DIAGNOSTICS).map(describeDiagnostic),
          ...(diagnostics.length > MAX_DIAGNOSTICS
            ? { truncated: diagnostics.length - MAX_DIAGNOSTICS }
            : {}),
        };
      },
    }),
    defineTool({
      name: 'lsp_definition',
      family: 'workspace',
      description:
        'Where the symbol at a position is defined (go to definition), from the language server. Line and ' +
        'column are 1-based, as grep and read_file report them.',
      input: positionInput,
      async execute(input) {
        const result = await atPosition('textDocument/definition', input);
        return { definitions: await Promise.all(asLocations(result).slice(0, MAX_LOCATIONS).map(locate)) };
      },
    }),
    defineTool({
      name: 'lsp_references',
      family: 'workspace',
      description:
        'Every reference to the symbol at a position (find all references, declaration included), from the ' +
        'language server. Line and column are 1-based.',
      input: positionInput,
      async execute(input) {
        const result = await atPosition('textDocument/references', input, {
          context: { includeDeclaration: true },
        });
        const locations = asLocations(result);
        return {
          references: await Promise.all(locations.slice(0, MAX_LOCATIONS).map(locate)),
          ...(locations.length > MAX_LOCATIONS ? { truncated: locations.length - MAX_LOCATIONS } : {}),
        };
      },
    }),
    defineTool({
      name: 'lsp_hover',
      family: 'workspace',
      description:
        'The type and documentation of the symbol at a position (what an editor shows on hover), from the ' +
        'language server. Line and column are 1-based.',
      input: positionInput,
      async execute(input) {
        const result = await atPosition('textDocument/hover', input);
        return { hover: hoverText(result?.contents) };
      },
    }),
    defineTool({
      name: 'lsp_completions',
      family: 'workspace',
      description:
        'What the language server would offer to complete at a position (members after "obj.", names in ' +
        'scope): label, kind and type detail, best first. Line and column are 1-based; put the column just ' +
        'after the text being completed.',
      input: positionInput.extend({
        max_results: z.number().int().min(1).max(MAX_COMPLETIONS).optional(),
      }),
      async execute({ max_results: limit = 50, ...position }) {
        const result = await atPosition('textDocument/completion', position, {
          context: { triggerKind: 1 },
        });
        const items = completionItems(result);
        return {
          completions: items.slice(0, limit).map(describeCompletion),
          ...(items.length > limit ? { truncated: items.length - limit } : {}),
        };
      },
    }),
  ];
}

const MAX_COMPLETIONS = 200;
const COMPLETION_KINDS = [
  '',
  'text',
  'method',
  'function',
  'constructor',
  'field',
  'variable',
  'class',
  'interface',
  'module',
  'property',
  'unit',
  'value',
  'enum',
  'keyword',
  'snippet',
  'color',
  'file',
  'reference',
  'folder',
  'enum member',
  'constant',
  'struct',
  'event',
  'operator',
  'type parameter',
];

interface CompletionItem {
  label: string | { label: string };
  kind?: number;
  detail?: string;
  sortText?: string;
}

/** A completion response (a list or an array), ordered as an editor would show it. */
function completionItems(result: unknown): CompletionItem[] {
  const items = (
    Array.isArray(result) ? result : ((result as { items?: unknown })?.items ?? [])
  ) as CompletionItem[];
  const label = (item: CompletionItem) => (typeof item.label === 'string' ? item.label : item.label.label);
  return [...items].sort((a, b) => (a.sortText ?? label(a)).localeCompare(b.sortText ?? label(b)));
}

function describeCompletion(item: CompletionItem) {
  return {
    label: typeof item.label === 'string' ? item.label : item.label.label,
    ...(item.kind ? { kind: COMPLETION_KINDS[item.kind] ?? String(item.kind) } : {}),
    ...(item.detail ? { detail: item.detail } : {}),
  };
}

/**
 * A workspace file a language server may be asked to open: a regular file (a named pipe or device would
 * block the read forever) of a size read_file would read too.
 */
async function servedFile(workspace: Workspace, requested: string) {
  const file = await workspace.resolve(requested);
  const info = await stat(file.absolute);
  if (!info.isFile()) throw new ModelBehaviorError('tool_input', `"${requested}" is not a regular file`);
  if (info.size > MAX_FILE_BYTES) {
    throw new ModelBehaviorError(
      'tool_input',
      `"${requested}" is ${info.size} bytes; files over ${MAX_FILE_BYTES} bytes are not opened`,
    );
  }
  return file;
}

function toPosition(line: number, column: number) {
  return { line: line - 1, character: column - 1 };
}

function describeDiagnostic(diagnostic: LspDiagnostic) {
  return {
    line: diagnostic.range.start.line + 1,
    column: diagnostic.range.start.character + 1,
    severity: SEVERITY[diagnostic.severity ?? 1] || 'error',
    message: diagnostic.message,
    ...(diagnostic.code !== undefined ? { code: diagnostic.code } : {}),
  };
}

function asLocations(result: unknown): Array<{ uri: string; range: LspRange }> {
  const items = Array.isArray(result) ? result : result ? [result] : [];
  return items.flatMap((item: any) => {
    if (item?.targetUri)
      return [{ uri: item.targetUri, range: item.targetSelectionRange ?? item.targetRange }];
    if (item?.uri && item.range) return [{ uri: item.uri, range: item.range }];
    return [];
  });
}

/** A location as the model sees it: relative path and 1-based position inside the root, the file name outside. */
export async function describeLocation(workspace: Workspace, location: { uri: string; range: LspRange }) {
  const line = location.range.start.line + 1;
  const column = location.range.start.character + 1;
  let named: string;
  try {
    named = fileURLToPath(location.uri);
  } catch {
    return { external: location.uri, line, column };
  }
  // The server may name a file through a symlinked folder (preserveSymlinks): judge where it really is.
  const absolute = await realpath(named).catch(() => undefined);
  if (!absolute || !workspace.contains(absolute)) return { external: path.basename(named), line, column };
  const info = await stat(absolute).catch(() => undefined);
  const readable = info?.isFile() && info.size <= MAX_FILE_BYTES;
  const text = readable ? await readFile(absolute, 'utf8').catch(() => undefined) : undefined;
  const preview = text?.split(/\r?\n/)[line - 1]?.trim().slice(0, 200);
  return {
    path: workspace.relative(absolute),
    line,
    column,
    ...(preview !== undefined ? { text: preview } : {}),
  };
}

function hoverText(contents: unknown): string {
  if (!contents) return '';
  if (typeof contents === 'string') return contents;
  if (Array.isArray(contents)) return contents.map(hoverText).filter(Boolean).join('\n\n');
  const value = (contents as { value?: unknown }).value;
  return typeof value === 'string' ? value : '';
}
