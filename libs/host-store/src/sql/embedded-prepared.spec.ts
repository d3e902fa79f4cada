import { useEmbeddedDatabase } from '../testing/embedded-database';

// The embedded database's thread prepares each query text once and runs it as EXECUTE after that
// (embedded-worker.ts). What a statement answers must not depend on it.
const embedded = useEmbeddedDatabase();
const db = () => embedded.db();

const preparedTexts = async () =>
  (await db().query<{ statement: string }>('SELECT statement FROM pg_prepared_statements')).map((r) => r.statement);

beforeAll(async () => {
  await db().query('CREATE TABLE IF NOT EXISTS prep_t (k text PRIMARY KEY, n integer NOT NULL, j jsonb)');
});

test('a query is prepared once and answers with the values of each call', async () => {
  const insert = 'INSERT INTO prep_t (k, n, j) VALUES ($1, $2, $3) ON CONFLICT (k) DO UPDATE SET n = EXCLUDED.n RETURNING k, n, j';
  expect(await db().query(insert, ['a', 1, JSON.stringify({ it: "it's" })])).toEqual([{ k: 'a', n: 1, j: { it: "it's" } }]);
  expect(await db().query(insert, ['b', 2, null])).toEqual([{ k: 'b', n: 2, j: null }]);
  expect(await db().query(insert, ['a', 3, null])).toEqual([{ k: 'a', n: 3, j: { it: "it's" } }]);
  expect((await preparedTexts()).filter((t) => t.includes('INSERT INTO prep_t'))).toHaveLength(1);
  expect(await db().query('SELECT k FROM prep_t WHERE k = ANY($1::text[]) ORDER BY k', [['a', 'b', 'c']])).toEqual([
    { k: 'a' },
    { k: 'b' },
  ]);
});

test('a statement PostgreSQL cannot prepare runs with its values inlined', async () => {
  // The type of $1 cannot be told from the statement alone.
  const untyped = 'SELECT $1 IS NULL AS missing';
  expect(await db().query(untyped, [null])).toEqual([{ missing: true }]);
  expect(await db().query(untyped, ['x'])).toEqual([{ missing: false }]);
  expect((await preparedTexts()).some((t) => t.includes('IS NULL AS missing'))).toBe(false);
  // Not a query: never prepared.
  await db().query('CREATE INDEX IF NOT EXISTS prep_t_n ON prep_t (n)');
});

test('errors of a prepared statement reach the caller with their code, and the statement works after', async () => {
  const insert = 'INSERT INTO prep_t (k, n) VALUES ($1, $2)';
  await db().query(insert, ['e1', 1]);
  await expect(db().query(insert, ['e1', 2])).rejects.toMatchObject({ code: '23505' });
  await expect(db().query(insert, ['e2', 'not a number'])).rejects.toMatchObject({ code: '22P02' });
  await db().query(insert, ['e2', 2]);
  expect(await db().query('SELECT n FROM prep_t WHERE k = $1', ['e2'])).toEqual([{ n: 2 }]);
});

test('prepared statements run inside transactions and batches, which commit or roll back as a whole', async () => {
  const bump = 'UPDATE prep_t SET n = n + $2 WHERE k = $1 RETURNING n';
  await db().query('INSERT INTO prep_t (k, n) VALUES ($1, $2) ON CONFLICT (k) DO UPDATE SET n = EXCLUDED.n', ['t', 0]);
  await db().query(bump, ['t', 1]); // prepared now
  await expect(
    db().transaction(async (tx) => {
      await tx.query(bump, ['t', 10]);
      throw new Error('undo');
    }),
  ).rejects.toThrow('undo');
  expect(await db().query('SELECT n FROM prep_t WHERE k = $1', ['t'])).toEqual([{ n: 1 }]);
  // A text first seen inside a transaction is run inlined there (a failed PREPARE would end the transaction).
  await db().transaction(async (tx) => {
    expect(await tx.query('UPDATE prep_t SET n = n * $2 WHERE k = $1 RETURNING n', ['t', 7])).toEqual([{ n: 7 }]);
  });
  await expect(
    db().batch([
      { sql: bump, params: ['t', 1] },
      { sql: 'INSERT INTO prep_t (k, n) VALUES ($1, $2)', params: ['t', 1] },
    ]),
  ).rejects.toMatchObject({ code: '23505' });
  expect(await db().query('SELECT n FROM prep_t WHERE k = $1', ['t'])).toEqual([{ n: 7 }]);
  expect(
    await db().batch([
      { sql: bump, params: ['t', 1] },
      { sql: 'SELECT count(*)::int AS c FROM prep_t WHERE n > $1', params: [5] },
    ]),
  ).toEqual([[{ n: 8 }], [{ c: 1 }]]);
});

test('a batch of keys joined to a large table walks its index instead of hashing the table', async () => {
  await db().query('CREATE TABLE IF NOT EXISTS prep_big (e text, p text, n integer, o jsonb, PRIMARY KEY (e, p, n))');
  const rows = Array.from({ length: 6000 }, (_, i) => ({ e: `ev-${i}`, p: 'plugin', n: 1 }));
  await db().query(
    'INSERT INTO prep_big (e, p, n) SELECT e, p, n FROM jsonb_to_recordset($1::jsonb) AS x(e text, p text, n integer) ON CONFLICT DO NOTHING',
    [JSON.stringify(rows)],
  );
  const keys = JSON.stringify([{ e: 'ev-17', p: 'plugin', n: 1, o: { sent: true } }]);
  const plan = await db().query<{ 'QUERY PLAN': string }>(
    `EXPLAIN UPDATE prep_big b SET o = x.o FROM jsonb_to_recordset($1::jsonb) AS x(e text, p text, n integer, o jsonb)
      WHERE b.e = x.e AND b.p = x.p AND b.n = x.n`,
    [keys],
  );
  const text = plan.map((r) => r['QUERY PLAN']).join('\n');
  expect(text).toMatch(/Index Scan using prep_big_pkey/);
  expect(text).not.toMatch(/Seq Scan on prep_big/);
});
