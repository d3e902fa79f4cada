import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EmbeddedDatabase } from '../sql/database';
import { migrate } from '../sql/migrations';

/** What {@link useEmbeddedDatabase} gives the tests of a file, once its `beforeAll` ran. */
export interface TestEmbeddedDatabase {
  /** The embedded database, its schema up to date. */
  db(): EmbeddedDatabase;
  /** The temporary folder that holds it (in `db/`), for the test's own files; removed after the file's tests. */
  dir(): string;
}

/**
 * An embedded database with the current schema in a folder of its own, for the suites of one test file: opened
 * in a `beforeAll` of the place it is called from, closed and removed in an `afterAll`. Register it before the
 * hooks that use it (Jest runs `beforeAll` hooks in order).
 */
export function useEmbeddedDatabase(prefix = 'host-embedded-db-'): TestEmbeddedDatabase {
  let dir: string | undefined;
  let db: EmbeddedDatabase | undefined;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), prefix));
    db = await EmbeddedDatabase.open(join(dir, 'db'));
    await migrate(db);
  }, 120_000);
  afterAll(async () => {
    await db?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });
  return {
    db: () => {
      if (!db) throw new Error('The embedded database is opened in beforeAll: use it from a hook or a test.');
      return db;
    },
    dir: () => dir!,
  };
}
