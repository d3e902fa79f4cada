import { ServerDatabase } from './database';
import { migrate } from './migrations';
import { describeSqlStoreContracts } from './sql-contracts.spec-helper';
import { startTestPostgres, type TestPostgres } from '../testing/postgres-server';

// The store contracts against a real PostgreSQL server this suite starts (initdb into a temporary directory).
let server: TestPostgres;
let db: ServerDatabase;
beforeAll(async () => {
  server = await startTestPostgres();
  db = await ServerDatabase.open(await server.createDatabase('contracts'));
  await migrate(db);
}, 120_000);
afterAll(async () => {
  await db?.close();
  await server?.stop();
});

describeSqlStoreContracts('PostgreSQL server', () => db);
