/**
 * What an `analyze_document` run is doing, in words (seed 003's SubAgentView): which document it reads,
 * "Analyzing…" then "Analysis complete", and each search inside the document with its query and how many
 * passages it found. Shown under the run's header, open or not, like a planner's checklist.
 */
import { useEffect, useState } from 'react';
import { type DocumentSummary, listDocuments } from '../api/resources.ts';
import type { RunView } from './run-fold.ts';
import { STATUS_LABELS } from './status-icon.tsx';

let documents: Promise<DocumentSummary[]> | undefined;

/** The title of a document of the person's, by id (the list is read once per page and shared). */
function useDocumentTitle(id: string | undefined): string | undefined {
  const [title, setTitle] = useState<string | undefined>();
  useEffect(() => {
    if (!id) return;
    let current = true;
    const find = (list: DocumentSummary[]) => list.find((document) => document.id === id);
    documents ??= listDocuments().catch(() => []);
    void documents.then(async (list) => {
      let found = find(list);
      if (!found) {
        // A document added after the list was read: read it again.
        documents = listDocuments().catch(() => []);
        found = find(await documents);
      }
      if (current) setTitle(found?.title);
    });
    return () => {
      current = false;
    };
  }, [id]);
  return title;
}

export function DocumentAnalysis({ run, inputs }: { run: RunView; inputs: Record<string, unknown> }) {
  const documentId = typeof inputs.document_id === 'string' ? inputs.document_id : undefined;
  const title = useDocumentTitle(documentId);
  const searches = run.toolCalls.filter((call) => call.name === 'search_within_document');
  const state =
    run.status === 'running'
      ? 'Analyzing…'
      : run.status === 'ok'
        ? 'Analysis complete'
        : STATUS_LABELS[run.status];
  return (
    <div className="document-analysis">
      <p className="document-analysis-head">
        <span className="document-analysis-title">{title ?? documentId ?? 'a document'}</span>
        <span className={`document-analysis-state state-${run.status}`}>{state}</span>
      </p>
      {searches.length > 0 && (
        <ul className="document-searches" aria-label="Searches in the document">
          {searches.map((call) => {
            const query = (call.input as { query?: unknown } | undefined)?.query;
            const results = (call.output as { results?: unknown[] } | undefined)?.results;
            const found =
              call.ok === undefined
                ? 'searching…'
                : call.ok === false
                  ? 'failed'
                  : `${results?.length ?? 0} result${results?.length === 1 ? '' : 's'}`;
            return (
              <li key={call.id}>
                <span className="document-search-query">“{String(query ?? '')}”</span>
                <span className="document-search-count">{found}</span>
              </li>
            );
          })}
        </ul>
      )}
    </div>
  );
}
