/**
 * The person's documents: upload by the file picker or by dropping files (several at once, with
 * progress), the list with type, pages, size and date, delete, and a search over their text.
 */
import { type DragEvent, useCallback, useEffect, useId, useRef, useState } from 'react';
import {
  type DocumentHit,
  type DocumentSummary,
  deleteDocument,
  listDocuments,
  searchDocuments,
  uploadDocuments,
} from '../api/resources.ts';
import { ConfirmDelete } from '../controls/confirm-delete.tsx';
import { formatBytes, formatDate } from '../format.ts';

export function DocumentsPanel() {
  const [documents, setDocuments] = useState<DocumentSummary[] | undefined>();
  const [error, setError] = useState<string | undefined>();
  const [upload, setUpload] = useState<{ names: string; fraction: number } | undefined>();
  const [dragging, setDragging] = useState(false);
  const [query, setQuery] = useState('');
  const [hits, setHits] = useState<DocumentHit[] | undefined>();
  const picker = useRef<HTMLInputElement>(null);
  const pickerId = useId();

  const refresh = useCallback(async () => {
    try {
      setDocuments(await listDocuments());
    } catch (caught) {
      setError((caught as Error).message);
    }
  }, []);
  useEffect(() => {
    void refresh();
  }, [refresh]);

  const add = async (files: File[]) => {
    if (files.length === 0) return;
    setError(undefined);
    setUpload({ names: files.map((file) => file.name).join(', '), fraction: 0 });
    try {
      const { refused } = await uploadDocuments(files, (fraction) =>
        setUpload((current) => (current ? { ...current, fraction } : current)),
      );
      if (refused.length) setError(`Not added: ${refused.join(' ')}`);
      await refresh();
    } catch (caught) {
      setError(`Upload failed: ${(caught as Error).message}`);
    } finally {
      setUpload(undefined);
    }
  };
  const onDrop = (event: DragEvent) => {
    event.preventDefault();
    setDragging(false);
    void add([...event.dataTransfer.files]);
  };
  const remove = async (document: DocumentSummary) => {
    try {
      await deleteDocument(document.id);
      await refresh();
    } catch (caught) {
      setError((caught as Error).message);
    }
  };
  const search = async () => {
    if (!query.trim()) {
      setHits(undefined);
      return;
    }
    try {
      setHits(await searchDocuments(query.trim()));
    } catch (caught) {
      setError((caught as Error).message);
    }
  };

  return (
    <div className="panel-content">
      <section
        className={`dropzone${dragging ? ' dragging' : ''}`}
        aria-label="Upload documents"
        onDragOver={(event) => {
          event.preventDefault();
          setDragging(true);
        }}
        onDragLeave={() => setDragging(false)}
        onDrop={onDrop}
      >
        <p>Drop PDF, Markdown, HTML, CSV or Excel files here, or</p>
        <label htmlFor={pickerId} className="button">
          Choose files…
        </label>
        <input
          id={pickerId}
          ref={picker}
          className="visually-hidden"
          type="file"
          multiple
          aria-label="Choose files to upload"
          onChange={(event) => {
            void add([...(event.target.files ?? [])]);
            event.target.value = '';
          }}
        />
        {upload && (
          <div className="upload-progress">
            <span>
              {upload.fraction < 1 ? 'Uploading' : 'Reading'} {upload.names}
            </span>
            <progress
              aria-label="Upload progress"
              value={upload.fraction < 1 ? upload.fraction : undefined}
              max={1}
            />
          </div>
        )}
      </section>
      {error && (
        <p className="panel-error" role="alert">
          {error}
        </p>
      )}
      <form
        className="search-row"
        onSubmit={(event) => {
          event.preventDefault();
          void search();
        }}
      >
        <input
          type="search"
          aria-label="Search documents"
          placeholder="Search in documents"
          value={query}
          onChange={(event) => setQuery(event.target.value)}
        />
        <button type="submit" className="button">
          Search
        </button>
      </form>
      {hits && (
        <section aria-label="Search results">
          {hits.length === 0 ? (
            <p className="muted">Nothing matches “{query}”.</p>
          ) : (
            <ol className="hits">
              {hits.map((hit, index) => (
                // biome-ignore lint/suspicious/noArrayIndexKey: hits are shown once, in rank order
                <li key={index}>
                  <div className="hit-title">
                    {hit.title}
                    {hit.page !== undefined && <span className="muted"> · page {hit.page}</span>}
                  </div>
                  <div className="hit-snippet">{hit.snippet}</div>
                </li>
              ))}
            </ol>
          )}
        </section>
      )}
      {documents === undefined && !error && <p className="muted">Loading…</p>}
      {documents && documents.length === 0 && (
        <p className="muted">No documents yet. The document tools and agents appear once you add one.</p>
      )}
      {documents && documents.length > 0 && (
        <table className="documents-table" aria-label="Documents">
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Type</th>
              <th scope="col">Pages</th>
              <th scope="col">Size</th>
              <th scope="col">Added</th>
              <th scope="col">
                <span className="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {documents.map((document) => (
              <tr key={document.id}>
                <td className="document-title">{document.title}</td>
                <td>{document.type}</td>
                <td>{document.pages ?? '—'}</td>
                <td>{document.size === undefined ? '—' : formatBytes(document.size)}</td>
                <td>{formatDate(document.addedAt)}</td>
                <td>
                  <ConfirmDelete what={`document ${document.title}`} onDelete={() => void remove(document)} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </div>
  );
}
