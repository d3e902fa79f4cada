import { DatabaseUnavailableError, ServerDatabase } from './database';
import { appliedMigrations, migrate, MIGRATIONS, SchemaTooNewError, type Migration } from './migrations';
import { describeSqlStoreContracts } from './sql-contracts.spec-helper';
import { SqlReplayStore } from './sql-replay-store';
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

describe('migrate', () => {
  const open = async (name: string) => ServerDatabase.open(await server.createDatabase(name));

  it('applies every step once, also when two hosts start at once', async () => {
    const first = await open('migrate_twice');
    const second = await ServerDatabase.open(server.url.replace(/\/postgres$/, '/migrate_twice'));
    try {
      const [a, b] = await Promise.all([migrate(first), migrate(second)]);
      expect([...a, ...b].sort((x, y) => x - y)).toEqual(MIGRATIONS.map((m) => m.version));
      expect(await migrate(first)).toEqual([]);
      expect(await appliedMigrations(first)).toEqual(MIGRATIONS.map((m) => m.version));
    } finally {
      await first.close();
      await second.close();
    }
  });

  it('works on with additive steps of a newer host, and refuses a database a newer host changed incompatibly', async () => {
    const db = await open('migrate_newer');
    try {
      const additive: Migration = { version: 1000, name: 'a column older hosts ignore', sql: 'ALTER TABLE host_meta ADD COLUMN note text' };
      await migrate(db, [...MIGRATIONS, additive]);
      expect(await migrate(db)).toEqual([]);
      const breaking: Migration = { version: 1001, name: 'a dropped column', sql: 'SELECT 1', breaksOlderHosts: true };
      await migrate(db, [...MIGRATIONS, additive, breaking]);
      await expect(migrate(db)).rejects.toThrow(SchemaTooNewError);
      await expect(migrate(db)).rejects.toThrow(/schema steps 1001 that this host does not know/);
    } finally {
      await db.close();
    }
  });

  it('rolls a failing step back whole', async () => {
    const db = await open('migrate_failing');
    try {
      const failing: Migration = {
        version: 1002,
        name: 'fails halfway',
        sql: 'CREATE TABLE half_done (x int);\nSELECT * FROM no_such_table',
      };
      await expect(migrate(db, [...MIGRATIONS, failing])).rejects.toThrow(/no_such_table/);
      expect(await db.query("SELECT to_regclass('host_plugins') AS t")).toEqual([{ t: null }]);
      expect(await migrate(db)).toEqual(MIGRATIONS.map((m) => m.version));
    } finally {
      await db.close();
    }
  });
});

describe('ServerDatabase', () => {
  it('names the server it cannot reach, without the password', async () => {
    const url = `postgres://host:pw-secret@127.0.0.1:${server.port}/no_such_database`;
    const failed = ServerDatabase.open(url);
    await expect(failed).rejects.toThrow(DatabaseUnavailableError);
    await expect(failed).rejects.toThrow(/postgres:\/\/host@127\.0\.0\.1:\d+\/no_such_database/);
    await expect(failed.catch((e: Error) => e.message)).resolves.not.toContain('pw-secret');
  });

  it('delivers notifications of committed transactions only', async () => {
    const got: string[] = [];
    const stop = await db.listen('host_test_channel', (p) => got.push(p));
    await db.transaction(async (tx) => {
      await tx.query("SELECT pg_notify('host_test_channel', 'kept')");
    });
    await db
      .transaction(async (tx) => {
        await tx.query("SELECT pg_notify('host_test_channel', 'rolled back')");
        throw new Error('undo');
      })
      .catch(() => undefined);
    await db.query("SELECT pg_notify('host_test_channel', 'last')");
    for (let i = 0; i < 500 && got.length < 2; i++) await new Promise((r) => setTimeout(r, 20));
    await stop();
    expect(got).toEqual(['kept', 'last']);
  });

  it('fails a transaction whose connection the server ends between two statements, without an unhandled error', async () => {
    // Without a listener on the checked-out client, the server's FATAL notice is an unhandled 'error' event, which
    // jest reports as a failure of the suite (and which ends a host process).
    const failed = db.transaction(async (tx) => {
      const [row] = await tx.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
      // Ended by another session while this one waits between statements (a server restart, a failover).
      await db.query('SELECT pg_terminate_backend($1)', [row!.pid]);
      await new Promise((r) => setTimeout(r, 200));
      await tx.query('SELECT 1');
    });
    await expect(failed).rejects.toThrow();
    // The pool goes on with a new connection.
    expect(await db.query<{ one: number }>('SELECT 1 AS one')).toEqual([{ one: 1 }]);
  });
});

describe('SqlReplayStore on one server shared by two hosts', () => {
  it('lets exactly one of two hosts take a request both receive at once, also when only the message id is shared', async () => {
    const url = await server.createDatabase('replays_shared');
    const [one, two] = [await ServerDatabase.open(url), await ServerDatabase.open(url)];
    try {
      await migrate(one);
      const a = new SqlReplayStore(one);
      const b = new SqlReplayStore(two);
      const now = Date.now();
      for (let i = 0; i < 30; i++) {
        const [x, y] = await Promise.all([
          a.claim('qqbot:1', [`event:a${i}`, `message:m${i}`], now, now + 600_000),
          b.claim('qqbot:1', [`event:b${i}`, `message:m${i}`], now, now + 600_000),
        ]);
        expect([x, y].filter(Boolean)).toHaveLength(1);
        // The loser's event id was not kept: only the winner's keys are in the table.
        const loser = x ? `event:b${i}` : `event:a${i}`;
        expect(await one.query('SELECT 1 FROM host_webhook_replays WHERE key = $1', [loser])).toEqual([]);
      }
      // One host forgets (the request was refused at admission): the other takes the platform's push again.
      await a.forget('qqbot:1', ['event:a0', 'event:b0', 'message:m0']);
      expect(await b.claim('qqbot:1', ['event:a0', 'message:m0'], now, now + 600_000)).toBe(true);
      expect(await a.count()).toBe(60);
    } finally {
      await one.close();
      await two.close();
    }
  });
});
