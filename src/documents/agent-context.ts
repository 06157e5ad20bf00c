import type { PrepareAgent } from '../core/run-agent.ts';
import type { DocumentStore } from './document-store.ts';
import { DocumentRejectedError } from './errors.ts';
import type { DocumentRecord, StoredChunk } from './types.ts';

/** How much of a document `analyze_document` gets in its instructions, by default. */
export const DEFAULT_DOCUMENT_CONTEXT_CHARS = 50_000;

export interface DocumentContextOptions {
  /** Characters of document text given to the agent; the rest is left out with a visible notice. */
  maxChars?: number;
  /** The agent that gets a document's text (default `analyze_document`). */
  agent?: string;
}

/**
 * The runtime's `prepareAgent` hook for `analyze_document`: puts the whole text of the run's document, in
 * order and with page markers, into the agent's instructions, cut at `maxChars` with a notice saying so.
 * An id that is unknown, or someone else's, refuses the run with a clear message (the same message for
 * both, so ids cannot be probed). Other agents are left alone.
 */
export function documentContextProvider(
  store: DocumentStore,
  options: DocumentContextOptions = {},
): PrepareAgent {
  const agent = options.agent ?? 'analyze_document';
  const maxChars = options.maxChars ?? DEFAULT_DOCUMENT_CONTEXT_CHARS;
  return async (request) => {
    if (request.agent !== agent) return undefined;
    const id = request.inputs.document_id;
    if (typeof id !== 'string' || !id.trim()) {
      throw new DocumentRejectedError(
        'document_id_missing',
        `${agent} needs a document_id. Find one with search_documents or query_documents (operation "list").`,
      );
    }
    const document = await store.get(request.userId, id.trim());
    if (!document) {
      throw new DocumentRejectedError(
        'document_not_found',
        `No document with id "${id}" in this user's collection, so there is nothing to analyse. Find the right id with search_documents or query_documents (operation "list").`,
        { document_id: id },
      );
    }
    const chunks = await store.chunks(request.userId, document.id);
    return { instructions: documentContext(document, chunks, maxChars) };
  };
}

/** The document block of `analyze_document`'s instructions. */
export function documentContext(document: DocumentRecord, chunks: StoredChunk[], maxChars: number): string {
  const paged = document.pages > 1;
  const header = [
    '## The document',
    `Title: ${document.title}`,
    `File: ${document.filename} (${document.type}, ${document.pages} ${unit(document)}, ${document.chars.toLocaleString('en')} characters)`,
    `Document id: ${document.id}`,
    '',
  ];
  const parts: string[] = [];
  let used = 0;
  let page = 0;
  let truncated = false;
  for (const chunk of chunks) {
    if (paged && chunk.page !== page) {
      page = chunk.page;
      parts.push(`\n[${unit(document, true)} ${page}]\n`);
    }
    const room = maxChars - used;
    if (chunk.text.length > room) {
      parts.push(chunk.text.slice(0, Math.max(0, room)));
      truncated = true;
      break;
    }
    parts.push(chunk.text);
    used += chunk.text.length;
  }
  const body = parts.join('').trim();
  const notice = truncated
    ? `\n\n[Document truncated: only the first ${maxChars.toLocaleString('en')} of ${document.chars.toLocaleString('en')} characters are shown above${paged ? ` (up to ${unit(document, true).toLowerCase()} ${page})` : ''}. Use search_within_document to find passages in the rest.]`
    : '';
  return `${header.join('\n')}<document>\n${body}\n</document>${notice}`;
}

/**
 * The main agent's note about the user's documents, or undefined when they have none (then the main
 * agent's instructions say nothing about documents at all).
 */
export async function documentsInstructionFragment(
  store: DocumentStore,
  userId: string,
  listed = 20,
  /** False when delegation is off: main reads the documents itself, and no sub-agent is named. */
  delegates = true,
): Promise<string | undefined> {
  const total = await store.count(userId);
  if (!total) return undefined;
  const recent = await store.list(userId, { limit: listed });
  const lines = [
    '## Documents',
    `The user has ${total} document${total === 1 ? '' : 's'} in Cadre${total > listed ? ` (the ${listed} most recent below)` : ''}:`,
    ...recent.map(
      (document) =>
        `- ${document.title} (id ${document.id}, ${document.type}, ${document.pages} ${unit(document)}${document.tags.length ? `, tags: ${document.tags.join(', ')}` : ''})`,
    ),
    ...(delegates
      ? [
          'Questions about what these documents say go to docqa (it searches across them and cites document and page).',
          'A deep look at one whole document (summarise, review, extract) goes to analyze_document with its document_id.',
        ]
      : ['Questions about what these documents say: use search_documents, and cite document and page.']),
    'Questions about the collection itself (how many, which, added when) are answered with query_documents.',
  ];
  return lines.join('\n');
}

/** True when the user has at least one document: the document agents are only relevant then. */
export async function hasDocuments(store: DocumentStore, userId: string): Promise<boolean> {
  return (await store.count(userId)) > 0;
}

function unit(document: DocumentRecord, singular = false): string {
  const word = document.type === 'xlsx' ? 'Sheet' : 'Page';
  if (singular) return word;
  return `${word.toLowerCase()}${document.pages === 1 ? '' : 's'}`;
}
