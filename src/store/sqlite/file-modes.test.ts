import { chmodSync, mkdirSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { expect, it } from 'vitest';
import { tempHome } from '../../../test/helpers/cli.ts';
import { Spool, spoolDirFor } from './spool.ts';
import { openSqliteStore } from './sqlite-store.ts';

const mode = (file: string) => statSync(file).mode & 0o777;

it('keeps the data folder 0700 and the database, its -wal and -shm and the spool 0600 on a shared host', async () => {
  const home = path.join(tempHome(), 'cadre-home');
  const file = path.join(home, 'cadre.db');
  const store = openSqliteStore(file);
  await store.users.add('alice');
  expect(mode(home)).toBe(0o700);
  for (const part of [file, `${file}-wal`, `${file}-shm`]) expect(mode(part)).toBe(0o600);
  const spool = new Spool(spoolDirFor(file), { pid: process.pid, host: 'modes-test' });
  spool.append('{"x":1}\n');
  expect(mode(spoolDirFor(file))).toBe(0o700);
  expect(mode(spool.path)).toBe(0o600);
  await store.close();

  // A folder and database an older Cadre left readable by everyone are narrowed when opened.
  const old = path.join(tempHome(), 'old-home');
  mkdirSync(old, { mode: 0o755 });
  chmodSync(old, 0o755);
  writeFileSync(path.join(old, 'cadre.db'), '', { mode: 0o644 });
  const reopened = openSqliteStore(path.join(old, 'cadre.db'));
  expect(mode(old)).toBe(0o700);
  expect(mode(path.join(old, 'cadre.db'))).toBe(0o600);
  await reopened.close();
});
