export * from '../../documents/types.ts';
export { collectionStats, countBy } from './collection-queries.ts';
export { normalizeTags, SqliteDocumentStore } from './document-store.ts';
export { hasOperators, type MatchMode, toMatchExpression } from './fts-query.ts';
