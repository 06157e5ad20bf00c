import type { DocumentFilter } from '../../../documents/types.ts';
import { documentFilter } from '../../sql/document-catalogue.ts';
import type { Params } from '../database.ts';
import { POSTGRES_DIALECT } from '../sql-port.ts';

/**
 * SQL conditions on the `documents` table aliased `d` for a filter (sql/document-catalogue.ts), each `?`
 * numbered into `params`, for the statements that build their own `$n` (search, vectors).
 */
export function filterConditions(filter: DocumentFilter | undefined, params: Params): string[] {
  const conditions = documentFilter(filter, POSTGRES_DIALECT);
  let next = 0;
  return conditions.sql.map((condition) =>
    condition.replaceAll('?', () => params.add(conditions.params[next++])),
  );
}
