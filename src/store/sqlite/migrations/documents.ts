import type { Migration } from '../../sql/migrations.ts';

/**
 * Documents, their tags, their text as contiguous chunks (concatenated in `seq` order they give the whole
 * text back) and optional embedding vectors. Every table carries `user_id` so that scoped queries never
 * need to trust an id alone. Chunk ids come from per-user blocks (`chunk_id_blocks`, see chunk-ids.ts);
 * a block's slot also names the user's own FTS5 index over their chunks, created on their first ingest
 * (see user-index.ts), so that no user's ranking depends on anyone else's documents.
 */
export const documentsMigration: Migration = {
  id: '004-documents',
  sql: `
    CREATE TABLE documents (
      id TEXT PRIMARY KEY,
      user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
      title TEXT NOT NULL,
      filename TEXT NOT NULL,
      type TEXT NOT NULL,
      pages INTEGER NOT NULL,
      size INTEGER NOT NULL,
      chars INTEGER NOT NULL,
      hash TEXT NOT NULL,
      tags TEXT NOT NULL DEFAULT '[]',
      added_at INTEGER NOT NULL,
      UNIQUE (user_id, hash)
    );
    CREATE INDEX documents_by_user ON documents(user_id, added_at DESC);
    CREATE TABLE document_tags (
      document_id TEXT NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
      user_id TEXT NOT NULL,
      tag TEXT NOT NULL,
      PRIMARY KEY (document_id, tag)
    );
    CREATE INDEX document_tags_by_user ON document_tags(user_id, tag);
    CREATE TABLE chunk_id_blocks (
      slot INTEGER PRIMARY KEY AUTOINCREMENT,
      user_id TEXT NOT NULL UNIQUE REFERENCES users(id) ON DELETE CASCADE
    );
    CREATE TABLE chunks (
      id INTEGER PRIMARY KEY,
      document_id TEXT NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
      user_id TEXT NOT NULL,
      seq INTEGER NOT NULL,
      page INTEGER NOT NULL,
      start INTEGER NOT NULL,
      end INTEGER NOT NULL,
      text TEXT NOT NULL
    );
    CREATE INDEX chunks_by_document ON chunks(document_id, seq);
    -- Covers the owner check of a filtered FTS match without reading the chunk's text.
    CREATE INDEX chunks_owner ON chunks(id, user_id, document_id);
    CREATE TABLE chunk_vectors (
      chunk_id INTEGER PRIMARY KEY REFERENCES chunks(id) ON DELETE CASCADE,
      user_id TEXT NOT NULL,
      document_id TEXT NOT NULL,
      model TEXT NOT NULL,
      vector BLOB NOT NULL
    );
    CREATE INDEX chunk_vectors_by_user ON chunk_vectors(user_id, model);
  `,
};

/**
 * A chunk's vectors keyed by chunk and embedding model, not by chunk alone: the store promises one vector
 * per chunk and model (`Embedder.name` keys them), so storing one model's vector must not replace
 * another's. Existing vectors are kept.
 */
export const vectorsPerModelMigration: Migration = {
  id: '011-vectors-per-model',
  sql: `
    CREATE TABLE chunk_vectors_per_model (
      chunk_id INTEGER NOT NULL REFERENCES chunks(id) ON DELETE CASCADE,
      model TEXT NOT NULL,
      user_id TEXT NOT NULL,
      document_id TEXT NOT NULL,
      vector BLOB NOT NULL,
      PRIMARY KEY (chunk_id, model)
    );
    INSERT INTO chunk_vectors_per_model (chunk_id, model, user_id, document_id, vector)
      SELECT chunk_id, model, user_id, document_id, vector FROM chunk_vectors;
    DROP TABLE chunk_vectors;
    ALTER TABLE chunk_vectors_per_model RENAME TO chunk_vectors;
    CREATE INDEX chunk_vectors_by_user ON chunk_vectors(user_id, model);
    CREATE INDEX chunk_vectors_by_document ON chunk_vectors(document_id, user_id);
  `,
};
