import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EmbeddedDatabase } from './database';
import { migrate } from './migrations';
import { describeSqlStoreContracts } from './sql-contracts.spec-helper';

// The same contracts against the embedded database (PostgreSQL in-process, in a directory).
let dir: string;
let db: EmbeddedDatabase;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'host-embedded-db-'));
  db = await EmbeddedDatabase.open(join(dir, 'db'));
  await migrate(db);
}, 120_000);
afterAll(async () => {
  await db?.close();
  rmSync(dir, { recursive: true, force: true });
});

describeSqlStoreContracts('embedded', () => db);
