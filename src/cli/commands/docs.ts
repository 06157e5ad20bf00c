import { parseArgs } from 'node:util';
import type { Cadre } from '../../app/create-cadre.ts';
import {
  type AddedDocument,
  type DocumentView,
  formatBytes,
  type IngestProgress,
} from '../../app/documents.ts';
import { CadreError } from '../../core/index.ts';
import { type CliCommand, type CliContext, openCadre } from '../cli-context.ts';
import { answerHelp, type CommandSpec, type FlagSpec, helpText } from '../command-args.ts';
import { EXIT } from '../errors.ts';
import { printableLine } from '../terminal-text.ts';

export const DOCS = {
  usage: [
    'cadre docs add FILE... [--tags a,b] [--json]',
    'cadre docs list [--json]',
    'cadre docs search "QUERY" [--limit N] [--type pdf] [--tag T] [--document ID] [--json]',
    'cadre docs rm ID... [--json]',
  ],
  summary:
    'Your document store (PDF, Markdown, HTML, text, CSV, XLSX): what docqa and analyze_document read. ' +
    'add prints the id of each document it added.',
  flags: {
    json: { type: 'boolean', description: 'print JSON' },
    tags: {
      type: 'string',
      placeholder: 'a,b',
      description: 'add: tags for the added files, comma-separated',
    },
    limit: { type: 'string', short: 'n', placeholder: 'N', description: 'search: at most N passages' },
    type: {
      type: 'string',
      placeholder: 'TYPE',
      description: 'search: only this type (pdf, md, csv, xlsx…)',
    },
    tag: { type: 'string', placeholder: 'TAG', description: 'search: only documents with this tag' },
    document: { type: 'string', placeholder: 'ID', description: 'search: only inside this document' },
  },
} as const satisfies CommandSpec<Record<string, FlagSpec>>;

const USAGE = helpText(DOCS);

/** Files at least this large show their progress while they are added. */
const PROGRESS_FROM_BYTES = 1024 * 1024;

/** `cadre docs add|list|search|rm`: the caller's document store from the command line. */
export const docsCommand: CliCommand = async (args, context) => {
  answerHelp(DOCS, args);
  const [sub, ...rest] = args;
  const action = sub ? ACTIONS[sub] : undefined;
  if (action) {
    const cadre = await openCadre(context, { lazy: true });
    try {
      return await action(rest, context, cadre);
    } finally {
      await cadre.close();
    }
  }
  switch (sub) {
    case undefined:
    case 'help':
    case '--help':
    case '-h':
      (sub ? context.stdout : context.stderr).write(USAGE);
      return sub ? EXIT.ok : EXIT.usage;
    default:
      context.stderr.write(`cadre docs: unknown command "${sub}"\n${USAGE}`);
      return EXIT.usage;
  }
};

type DocsAction = (args: string[], context: CliContext, cadre: Cadre) => Promise<number>;

async function add(args: string[], context: CliContext, cadre: Cadre): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: { tags: { type: 'string' }, json: { type: 'boolean', default: false } },
  });
  if (!positionals.length) return usage(context, 'docs add needs at least one FILE');
  const tags = values.tags
    ? values.tags
        .split(',')
        .map((tag) => tag.trim())
        .filter(Boolean)
    : [];
  const added: AddedDocument[] = [];
  let failures = 0;
  let worst: number = EXIT.ok;
  for (const path of positionals) {
    const progress = progressReporter(context);
    try {
      const document = await cadre.documents.addFile(context.userId, path, {
        cwd: context.cwd,
        tags,
        onProgress: progress.update,
      });
      const { duplicate } = document;
      progress.clear();
      added.push(document);
      if (!values.json) {
        context.stdout.write(
          duplicate
            ? `${document.id}  already added: ${printableLine(document.title)} (${printableLine(document.filename)}, same content)\n`
            : `${document.id}  added ${printableLine(document.title)} (${summary(document)})\n`,
        );
      }
    } catch (error) {
      progress.clear();
      failures++;
      const fault = CadreError.isInstance(error) && error.fault !== 'user' ? EXIT.system : EXIT.notOk;
      worst = Math.max(worst, fault);
      context.stderr.write(`cadre docs add: ${(error as Error).message}\n`);
    }
  }
  if (values.json) context.stdout.write(`${JSON.stringify(added, null, 2)}\n`);
  else if (failures && positionals.length > 1) {
    context.stderr.write(`${added.length} added, ${failures} failed\n`);
  }
  return failures ? worst : EXIT.ok;
}

async function list(args: string[], context: CliContext, cadre: Cadre): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: { json: { type: 'boolean', default: false } },
  });
  if (positionals.length) return usage(context, `docs list takes no arguments (got "${positionals[0]}")`);
  const documents = await cadre.documents.list(context.userId);
  if (values.json) {
    context.stdout.write(`${JSON.stringify(documents, null, 2)}\n`);
    return EXIT.ok;
  }
  if (!documents.length) {
    context.stdout.write('No documents yet. Add some with: cadre docs add FILE...\n');
    return EXIT.ok;
  }
  const rows = documents.map((document) => [
    document.id,
    document.type,
    String(document.pages),
    formatBytes(document.size_bytes),
    document.added.slice(0, 16).replace('T', ' '),
    `${printableLine(document.title)}${document.tags.length ? `  [${printableLine(document.tags.join(', '))}]` : ''}`,
  ]);
  context.stdout.write(table([['ID', 'TYPE', 'PAGES', 'SIZE', 'ADDED', 'TITLE'], ...rows]));
  return EXIT.ok;
}

async function search(args: string[], context: CliContext, cadre: Cadre): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      limit: { type: 'string', short: 'n' },
      type: { type: 'string' },
      tag: { type: 'string' },
      document: { type: 'string' },
      json: { type: 'boolean', default: false },
    },
  });
  const query = positionals.join(' ').trim();
  if (!query) return usage(context, 'docs search needs a QUERY');
  const limit = values.limit === undefined ? 10 : Number(values.limit);
  if (!Number.isInteger(limit) || limit < 1 || limit > 100) {
    return usage(
      context,
      `docs search: --limit must be a whole number from 1 to 100 (got "${values.limit}")`,
    );
  }
  const hits = await cadre.documents
    .search(context.userId, {
      query,
      limit,
      ...(values.type ? { types: values.type.split(',') } : {}),
      ...(values.tag ? { tags: values.tag.split(',') } : {}),
      ...(values.document ? { documentIds: [values.document] } : {}),
    })
    .catch((error: unknown) => {
      if (CadreError.isInstance(error) && error.code === 'usage') return error.message;
      throw error;
    });
  if (typeof hits === 'string') return usage(context, `docs search: --${hits}`);
  if (values.json) {
    context.stdout.write(`${JSON.stringify(hits, null, 2)}\n`);
    return EXIT.ok;
  }
  if (!hits.length) {
    context.stdout.write(`No matches for "${query}".\n`);
    return EXIT.ok;
  }
  for (const hit of hits) {
    context.stdout.write(`${printableLine(hit.title)}, p. ${hit.page}  (${hit.documentId})\n`);
    context.stdout.write(`  ${printableLine(hit.snippet)}\n\n`);
  }
  return EXIT.ok;
}

async function remove(args: string[], context: CliContext, cadre: Cadre): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: { json: { type: 'boolean', default: false } },
  });
  if (!positionals.length) return usage(context, 'docs rm needs a document ID (see cadre docs list)');
  const results: Array<{ id: string; removed: boolean; title?: string }> = [];
  for (const id of positionals) {
    try {
      const document = await cadre.documents.remove(context.userId, id);
      results.push({ id, removed: true, title: document.title });
      if (!values.json) context.stdout.write(`removed ${id} (${printableLine(document.title)})\n`);
    } catch (error) {
      if (!(CadreError.isInstance(error) && error.code === 'unknown_document')) throw error;
      results.push({ id, removed: false });
      context.stderr.write(
        `cadre docs rm: no document with id "${printableLine(id)}" (see cadre docs list)\n`,
      );
    }
  }
  if (values.json) context.stdout.write(`${JSON.stringify(results, null, 2)}\n`);
  // Not found is the person's input, as everywhere else in cadre (runs show, agents show): exit 2.
  return results.every((result) => result.removed) ? EXIT.ok : EXIT.usage;
}

const ACTIONS: Record<string, DocsAction> = {
  add,
  list,
  ls: list,
  search,
  rm: remove,
  remove,
};

function summary(document: DocumentView): string {
  const unit = document.type === 'xlsx' ? 'sheet' : 'page';
  return `${document.type}, ${document.pages} ${unit}${document.pages === 1 ? '' : 's'}, ${formatBytes(document.size_bytes)}`;
}

/** Progress on stderr for large files: one updating line on a terminal, a line per phase otherwise. */
function progressReporter(context: CliContext) {
  const started = performance.now();
  let shown = false;
  let lastPhase = '';
  let large = false;
  return {
    update(progress: IngestProgress) {
      if (progress.phase === 'reading' && progress.total >= PROGRESS_FROM_BYTES) large = true;
      if (!large || progress.phase === 'done') return;
      const seconds = ((performance.now() - started) / 1000).toFixed(1);
      const amount =
        progress.total && progress.phase === 'reading'
          ? ` ${formatBytes(progress.total)}`
          : progress.total
            ? ` ${progress.done}/${progress.total} chunks`
            : '';
      const line = `adding ${progress.filename}: ${progress.phase}${amount} (${seconds} s)`;
      if (context.stderr.isTTY) {
        context.stderr.write(`\r\x1b[2K${line}`);
        shown = true;
      } else if (progress.phase !== lastPhase) {
        context.stderr.write(`${line}\n`);
      }
      lastPhase = progress.phase;
    },
    clear() {
      if (shown) context.stderr.write('\r\x1b[2K');
      shown = false;
    },
  };
}

function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)));
  return rows
    .map((row) =>
      row.map((cell, column) => (column === row.length - 1 ? cell : cell.padEnd(widths[column]!))).join('  '),
    )
    .join('\n')
    .concat('\n');
}

function usage(context: CliContext, message: string): number {
  context.stderr.write(`cadre ${message}\n${USAGE}`);
  return EXIT.usage;
}
