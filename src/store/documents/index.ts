export { type CollectionStats, collectionStats, countBy, type GroupBy } from './collection-queries.ts';
export { type DocumentOrder, DocumentStore, type ListOptions, normalizeTags } from './document-store.ts';
export { hasOperators, type MatchMode, toMatchExpression } from './fts-query.ts';
export * from './types.ts';
