import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { contractEvent } from '../testing/event-log-store-contract';
import { EmbeddedDatabase } from './database';
import { cachedTemplateDir, isUsableTemplate, seedFromTemplate, TEMPLATE_MARKER } from './embedded-template';
import { MIGRATIONS, migrate } from './migrations';
import { SqlEventInbox } from './sql-event-inbox';
import { SqlEventLogStore } from './sql-event-log-store';

// The template a new embedded database is copied from, and what keeps the
// embedded event log's table bounded. Every case uses real PGlite databases.
let root: string;
let cache: string;
const neverInitialise = async () => {
  throw new Error('no template is to be made here');
};

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'host-embedded-template-'));
  // Opening one database makes the workspace cache's template when it is missing.
  const db = await EmbeddedDatabase.open(join(root, 'first'));
  await db.close();
  cache = cachedTemplateDir();
}, 180_000);
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** A copy of the cache's template whose marker says `change` instead. */
function templateWith(name: string, change: Record<string, unknown>): string {
  const dir = join(root, name);
  cpSync(cache, dir, { recursive: true });
  const marker = JSON.parse(readFileSync(join(dir, TEMPLATE_MARKER), 'utf8')) as Record<string, unknown>;
  writeFileSync(join(dir, TEMPLATE_MARKER), JSON.stringify({ ...marker, ...change }));
  return dir;
}

test('the cached template holds every migration step, and a new database starts with nothing to migrate', async () => {
  const marker = JSON.parse(readFileSync(join(cache, TEMPLATE_MARKER), 'utf8')) as { migrations: number[] };
  expect(marker.migrations).toEqual(MIGRATIONS.map((m) => m.version));
  const db = await EmbeddedDatabase.open(join(root, 'migrated'), { templates: [] });
  try {
    const steps = await db.query<{ version: number }>('SELECT version FROM host_schema_migrations ORDER BY version');
    expect(steps.map((s) => s.version)).toEqual(MIGRATIONS.map((m) => m.version));
    expect(await migrate(db)).toEqual([]);
  } finally {
    await db.close();
  }
}, 60_000);

test('a template made by another PGlite version is ignored', async () => {
  const other = templateWith('other-version', { pglite: '0.0.1' });
  expect(isUsableTemplate(other)).toBe(false);
  expect(isUsableTemplate(other, false)).toBe(false);
  const seeded = await seedFromTemplate(join(root, 'from-other'), [other], neverInitialise, cache);
  expect(seeded).toEqual({ seeded: 'template', from: cache });
  // Without any other, PGlite is left to initialise the folder.
  expect(await seedFromTemplate(join(root, 'from-other-only'), [other], neverInitialise, null)).toEqual({ seeded: 'none' });
});

test('a template with fewer migration steps is used only when nothing complete is found, and migrated forward', async () => {
  const older = templateWith('older-steps', { migrations: [MIGRATIONS[0]!.version] });
  const unknown = templateWith('unknown-steps', { migrations: [...MIGRATIONS.map((m) => m.version), 999_999] });
  expect(isUsableTemplate(older)).toBe(false);
  expect(isUsableTemplate(older, false)).toBe(true);
  expect(isUsableTemplate(unknown, false)).toBe(false);
  expect(await seedFromTemplate(join(root, 'prefers-complete'), [older], neverInitialise, cache)).toEqual({
    seeded: 'template',
    from: cache,
  });
  expect(await seedFromTemplate(join(root, 'older-only'), [unknown, older], neverInitialise, null)).toEqual({
    seeded: 'template',
    from: older,
  });
  const db = await EmbeddedDatabase.open(join(root, 'older-only'), { templates: [], cache: null });
  try {
    await migrate(db);
    expect(await db.query('SELECT count(*)::int AS n FROM host_events')).toEqual([{ n: 0 }]);
  } finally {
    await db.close();
  }
}, 60_000);

test('an interrupted copy leaves no half-made database, and the next start succeeds', async () => {
  // A template whose copy fails halfway: fs.cp refuses a named pipe.
  const broken = templateWith('broken', {});
  execFileSync('mkfifo', [join(broken, 'global', 'zz-pipe')]);
  const state = join(root, 'interrupted');
  mkdirSync(state);
  const dir = join(state, 'db');
  // What a copy killed with its process leaves beside the folder (a pid that no longer runs).
  const abandoned = join(state, 'db.new-999999999-abc');
  cpSync(cache, abandoned, { recursive: true });
  await expect(EmbeddedDatabase.open(dir, { templates: [broken], cache: null })).rejects.toThrow(/its folder cannot be made/);
  expect(existsSync(join(dir, 'PG_VERSION'))).toBe(false);
  expect(readdirSync(state)).toEqual([]);
  const db = await EmbeddedDatabase.open(dir, { templates: [cache], cache: null });
  try {
    await migrate(db);
    expect(await db.query('SELECT 1 AS one')).toEqual([{ one: 1 }]);
  } finally {
    await db.close();
  }
  expect(readdirSync(state)).toEqual(['db']);
}, 60_000);

test('with no template at all, PGlite initialises the folder in place', async () => {
  const dir = join(root, 'no-template');
  expect(await seedFromTemplate(dir, [join(root, 'missing')], neverInitialise, null)).toEqual({ seeded: 'none' });
  const db = await EmbeddedDatabase.open(dir, { templates: [join(root, 'missing')], cache: null });
  try {
    await migrate(db);
    expect(await db.query('SELECT count(*)::int AS n FROM host_events')).toEqual([{ n: 0 }]);
    expect(existsSync(join(dir, 'PG_VERSION'))).toBe(true);
  } finally {
    await db.close();
  }
}, 180_000);

describe('the embedded event log stays bounded on disk', () => {
  /**
   * The size of `table` with its indexes after `events` events through a log of 100, each kept in the inbox until
   * its record is written final (which takes it out of the inbox).
   */
  async function sizeAfter(name: string, events: number, vacuumEveryRows?: number, table = 'host_events'): Promise<number[]> {
    const db = await EmbeddedDatabase.open(join(root, name), { cache });
    const sizes: number[] = [];
    try {
      const log = await SqlEventLogStore.open(db, { capacity: 100, vacuumEveryRows, flushIntervalMilliseconds: 60_000 });
      const inbox = new SqlEventInbox(db, 'host');
      for (let i = 0; i < events; i++) {
        const record = contractEvent(`evt-${name}-${i}`, ['com.example.a']);
        (record.event as { message: { content: string } }).message.content = 'x'.repeat(400);
        await inbox.add(record.event);
        log.append({ ...record, completedAt: '2026-01-01T00:00:01.000Z' });
        if (i % 50 === 49) await log.flush();
        if (i % 1000 === 999) {
          const [row] = await db.query<{ size: string }>(`SELECT pg_total_relation_size($1) AS size`, [table]);
          sizes.push(Number(row!.size));
        }
      }
      await log.close();
    } finally {
      await db.close();
    }
    return sizes;
  }

  test('vacuumed as the log turns over, host_events does not grow with the events written', async () => {
    const sizes = await sizeAfter('vacuumed', 8000);
    expect(sizes[sizes.length - 1]!).toBeLessThanOrEqual(1.25 * sizes[1]!);
    // Without vacuum the same load grows the table with every event (what the bound above prevents).
    const unvacuumed = await sizeAfter('unvacuumed', 8000, Number.POSITIVE_INFINITY);
    expect(unvacuumed[unvacuumed.length - 1]!).toBeGreaterThan(2 * unvacuumed[1]!);
  }, 180_000);

  test('nor does the inbox, which every event enters and leaves', async () => {
    const sizes = await sizeAfter('inbox-vacuumed', 6000, undefined, 'host_event_inbox');
    expect(sizes[sizes.length - 1]!).toBeLessThanOrEqual(1.25 * sizes[1]!);
    const unvacuumed = await sizeAfter('inbox-unvacuumed', 6000, Number.POSITIVE_INFINITY, 'host_event_inbox');
    expect(unvacuumed[unvacuumed.length - 1]!).toBeGreaterThan(2 * unvacuumed[1]!);
  }, 240_000);
});
