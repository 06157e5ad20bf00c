/**
 * One schema change of the SQLite store: applied once, in list order (index.ts), and recorded by id. Its
 * own leaf module, so the files that declare migrations import nothing of the database that runs them.
 */
export interface Migration {
  id: string;
  sql: string;
}
