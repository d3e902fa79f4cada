import { Worker } from 'node:worker_threads';
import { join } from 'node:path';
import { BUNDLED_TEMPLATE_DIR, EMBEDDED_INITDB_PARAMS, seedFromTemplate, writeTemplate } from './embedded-template';
import { EMBEDDED_WORKER_SOURCE } from './embedded-worker';
import { migrate } from './migrations';
import { Client, Pool, type PoolClient } from 'pg';

/** Runs statements: the database itself, or one transaction of it. */
export interface SqlQueryable {
  /** Runs one statement with `$1`-style parameters; answers its rows. */
  query<T = Record<string, unknown>>(text: string, params?: unknown[]): Promise<T[]>;
}

/**
 * One SQL database the host's stores share: PostgreSQL in-process (PGlite,
 * the embedded default, in the data directory) or a PostgreSQL server
 * (`HOST_DATABASE_URL`). Both speak the same SQL, so one schema and one set
 * of migrations serve both.
 */
export interface SqlDatabase extends SqlQueryable {
  readonly kind: 'embedded' | 'postgres';
  /** Runs `work` in one transaction: committed when it resolves, rolled back when it throws. */
  transaction<T>(work: (tx: SqlQueryable) => Promise<T>): Promise<T>;
  /**
   * Runs `statements` in order in one transaction (all or none); answers the
   * rows of each. Unlike `transaction`, nothing between the statements depends
   * on their answers, so the embedded database gets the whole batch in one message.
   */
  batch(statements: readonly SqlStatement[]): Promise<unknown[][]>;
  /**
   * Calls `onPayload` for every notification on `channel` (PostgreSQL LISTEN);
   * answers the function that stops it. `onReconnect` is called after the
   * listening connection was lost and made again (notifications of the gap are lost).
   */
  listen(channel: string, onPayload: (payload: string) => void, onReconnect?: () => void): Promise<() => Promise<void>>;
  close(): Promise<void>;
}

/** One statement of a batch. */
export interface SqlStatement {
  sql: string;
  params?: unknown[];
}

/** The database cannot be opened or reached; the host does not start. */
export class DatabaseUnavailableError extends Error {
  constructor(where: string, reason: string) {
    super(`The host's database (${where}) cannot be used: ${reason}`);
    this.name = 'DatabaseUnavailableError';
  }
}

/** Where a database URL points, without its password, for messages. */
export function describeDatabaseUrl(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.username ? `${u.username}@` : ''}${u.host}${u.pathname}`;
  } catch {
    return 'HOST_DATABASE_URL (not a URL)';
  }
}

/** A query of the embedded database failed; `code` is PostgreSQL's SQLSTATE where there is one. */
export class EmbeddedQueryError extends Error {
  constructor(
    message: string,
    readonly code: string | undefined,
  ) {
    super(message);
    this.name = 'EmbeddedQueryError';
  }
}

/**
 * PostgreSQL settings of the embedded database. PGlite's defaults suit a
 * browser tab that owns the machine: 128 MiB of shared buffers (allocated in
 * the WebAssembly heap, which never shrinks) and up to 1 GiB of WAL before a
 * checkpoint. The host's database is a few MiB (the registry and the newest
 * 1000 events), so:
 * - `shared_buffers=16MB`: the whole database fits; pages beyond it come
 *   from the operating system's cache, which PostgreSQL reads through.
 * - `maintenance_work_mem=16MB`, `work_mem=2MB`: no statement of the host
 *   sorts more.
 * - `min_wal_size=32MB`, `max_wal_size=64MB`: a single-user PostgreSQL has no
 *   checkpointer process, it checkpoints itself when the WAL reaches
 *   `max_wal_size`; this bounds `db/pg_wal` (both values are at least two
 *   segments of 16 MiB, the size of databases made before 1 MiB segments).
 * - `full_page_writes=off`: PGlite runs PostgreSQL without fsync (its file
 *   system has none), so what the database promises is surviving the host
 *   process dying, whose writes are all in the operating system's cache;
 *   full pages in the WAL only guard against pages torn by a power loss,
 *   which fsync-less writes do not survive anyway. It halves the WAL written
 *   per event.
 */
export const EMBEDDED_SETTINGS: readonly string[] = [
  'shared_buffers=16MB',
  'work_mem=2MB',
  'maintenance_work_mem=16MB',
  'min_wal_size=32MB',
  'max_wal_size=64MB',
  'full_page_writes=off',
];

export interface EmbeddedOpenOptions {
  /**
   * Template folders a new database is copied from (see embedded-template.ts),
   * tried before the workspace cache; default: `pglite-template` beside the
   * running bundle.
   */
  templates?: string[];
  /** The workspace cache's template folder; `null`: none (default: see `cachedTemplateDir`). */
  cache?: string | null;
}

type WorkerAnswer = { id: number; ok: true; value: unknown } | { id: number; ok: false; error: { message: string; code?: string } };

/**
 * PostgreSQL in-process (PGlite, compiled to WebAssembly) on `<dir>`, run on
 * a worker thread of its own (see embedded-worker.ts): the host's event loop
 * never waits for the database. PGlite is loaded only when an embedded
 * database is opened.
 */
export class EmbeddedDatabase implements SqlDatabase {
  readonly kind = 'embedded' as const;
  private nextId = 1;
  private readonly waiting = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  private readonly listeners = new Map<string, Set<(payload: string) => void>>();
  private closed = false;

  private constructor(
    private readonly worker: Worker,
    readonly dir: string,
  ) {
    worker.on('message', (m: WorkerAnswer | { notify: string; payload: string }) => {
      if ('notify' in m) {
        for (const l of this.listeners.get(m.notify) ?? []) l(m.payload);
        return;
      }
      const w = this.waiting.get(m.id);
      this.waiting.delete(m.id);
      if (m.ok) w?.resolve(m.value);
      else w?.reject(new EmbeddedQueryError(m.error.message, m.error.code));
    });
    worker.on('error', (e) => this.failAll(e));
    worker.on('exit', () => this.failAll(new Error('The embedded database stopped.')));
  }

  /**
   * Opens the database in `dir`. A folder without one gets it from a template
   * first (a copy of a cluster initdb made once), or else PGlite runs initdb.
   */
  static async open(dir: string, o: EmbeddedOpenOptions = {}): Promise<EmbeddedDatabase> {
    const templates = o.templates ?? [join(__dirname, BUNDLED_TEMPLATE_DIR)];
    // The worker compiles PGlite's WebAssembly while the folder is copied.
    const worker = EmbeddedDatabase.spawn(dir);
    try {
      await seedFromTemplate(dir, templates, (scratch, base) => EmbeddedDatabase.initialiseTemplate(scratch, base), o.cache);
    } catch (e) {
      await worker.terminate();
      throw new DatabaseUnavailableError(dir, `its folder cannot be made: ${(e as Error).message}`);
    }
    return EmbeddedDatabase.start(dir, worker);
  }

  /** Writes a template for new databases to `target` (see embedded-template.ts). */
  static async writeTemplate(target: string): Promise<void> {
    await writeTemplate(target, (scratch, base) => EmbeddedDatabase.initialiseTemplate(scratch, base));
  }

  /**
   * Makes a template's cluster in `dir`: initdb, then without the databases
   * `template0` and `template1`. The host uses only `postgres` and never
   * creates a database (what the templates are for); without them a new data
   * directory is a third of the files to copy (about 330 instead of 980), and
   * creating files is what a copy spends its time on. Then the host's schema
   * (every step of `MIGRATIONS`), so a new database starts migrated. With
   * `base`, `dir` already holds an older template (made with fewer steps): it
   * is migrated forward instead of running initdb again.
   */
  private static async initialiseTemplate(dir: string, base: boolean): Promise<void> {
    const db = await EmbeddedDatabase.start(dir, EmbeddedDatabase.spawn(dir));
    try {
      if (!base) {
        await db.query(`UPDATE pg_database SET datistemplate = false WHERE datname IN ('template0', 'template1')`);
        await db.query('DROP DATABASE template0');
        await db.query('DROP DATABASE template1');
      }
      await migrate(db);
      await db.query('CHECKPOINT');
    } finally {
      await db.close();
    }
  }

  /** The database's thread for `dir`: it loads PGlite at once and opens the database when `start` says so. */
  private static spawn(dir: string): Worker {
    return new Worker(EMBEDDED_WORKER_SOURCE, {
      eval: true,
      workerData: { dir, pglite: require.resolve('@electric-sql/pglite'), settings: EMBEDDED_SETTINGS, initdb: EMBEDDED_INITDB_PARAMS },
    });
  }

  /** Starts PGlite on `dir` in `worker` (initdb when it holds no database). */
  private static async start(dir: string, worker: Worker): Promise<EmbeddedDatabase> {
    const db = new EmbeddedDatabase(worker, dir);
    worker.postMessage({ op: 'open' });
    const openFailed = new Promise<never>((_, reject) =>
      worker.on('message', (m: { openFailed?: { message: string } }) => {
        if (m.openFailed) reject(new Error(m.openFailed.message));
      }),
    );
    try {
      await Promise.race([db.query('SELECT 1'), openFailed]);
      return db;
    } catch (e) {
      await worker.terminate();
      throw new DatabaseUnavailableError(
        dir,
        `${(e as Error).message}. Another process may be using it, or it was damaged; restore the data directory from a backup.`,
      );
    }
  }

  async query<T>(text: string, params?: unknown[]): Promise<T[]> {
    return (await this.call({ op: 'query', sql: text, params })) as T[];
  }

  async transaction<T>(work: (tx: SqlQueryable) => Promise<T>): Promise<T> {
    const tx = (await this.call({ op: 'begin' })) as number;
    let result: T;
    try {
      result = await work({
        query: async <R>(text: string, params?: unknown[]) => (await this.call({ op: 'query', sql: text, params, tx })) as R[],
      });
    } catch (e) {
      await this.call({ op: 'end', tx, commit: false }).catch(() => undefined);
      throw e;
    }
    await this.call({ op: 'end', tx, commit: true });
    return result;
  }

  async batch(statements: readonly SqlStatement[]): Promise<unknown[][]> {
    if (statements.length === 0) return [];
    return (await this.call({ op: 'batch', statements })) as unknown[][];
  }

  async listen(channel: string, onPayload: (payload: string) => void): Promise<() => Promise<void>> {
    let set = this.listeners.get(channel);
    if (!set) {
      set = new Set();
      this.listeners.set(channel, set);
      await this.call({ op: 'listen', channel });
    }
    set.add(onPayload);
    return async () => {
      set.delete(onPayload);
    };
  }

  async close(): Promise<void> {
    if (this.closed) return;
    await this.call({ op: 'close' }).catch(() => undefined);
    this.closed = true;
    await this.worker.terminate();
  }

  private call(message: Record<string, unknown>): Promise<unknown> {
    if (this.closed) return Promise.reject(new Error('The embedded database is closed.'));
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      this.worker.postMessage({ id, ...message });
    });
  }

  private failAll(e: Error): void {
    this.closed = true;
    for (const w of this.waiting.values()) w.reject(e);
    this.waiting.clear();
  }
}

/** A PostgreSQL server reached through a small connection pool. */
export class ServerDatabase implements SqlDatabase {
  readonly kind = 'postgres' as const;
  private readonly listeners = new Set<Client>();

  private constructor(
    private readonly pool: Pool,
    private readonly config: { connectionString: string; password?: string },
  ) {}

  /** Connects to `url` (a `postgres://` URL) and checks that the server answers. */
  static async open(url: string, options: { maxConnections?: number; password?: string } = {}): Promise<ServerDatabase> {
    const config = { connectionString: url, ...(options.password !== undefined ? { password: options.password } : {}) };
    const pool = new Pool({ ...config, max: options.maxConnections ?? 8, connectionTimeoutMillis: 10_000 });
    // An idle connection the server ended (restart, failover) is dropped and replaced on next use.
    pool.on('error', () => {});
    try {
      await pool.query('SELECT 1');
    } catch (e) {
      await pool.end().catch(() => {});
      throw new DatabaseUnavailableError(describeDatabaseUrl(url), (e as Error).message);
    }
    return new ServerDatabase(pool, config);
  }

  async query<T>(text: string, params?: unknown[]): Promise<T[]> {
    return (await this.pool.query(text, params as unknown[])).rows as T[];
  }

  async transaction<T>(work: (tx: SqlQueryable) => Promise<T>): Promise<T> {
    const client: PoolClient = await this.pool.connect();
    let broken = false;
    // A checked-out client has no listener of the pool's: the server ending the connection between two statements
    // would otherwise be an unhandled 'error' that ends the process. The statement fails; the client is dropped.
    const lost = () => (broken = true);
    client.on('error', lost);
    try {
      await client.query('BEGIN');
      const result = await work({ query: async <R>(text: string, params?: unknown[]) => (await client.query(text, params)).rows as R[] });
      await client.query('COMMIT');
      return result;
    } catch (e) {
      await client.query('ROLLBACK').catch(() => (broken = true));
      throw e;
    } finally {
      client.off('error', lost);
      client.release(broken);
    }
  }

  async batch(statements: readonly SqlStatement[]): Promise<unknown[][]> {
    if (statements.length === 0) return [];
    return this.transaction(async (tx) => {
      const rows: unknown[][] = [];
      for (const st of statements) rows.push(await tx.query(st.sql, st.params));
      return rows;
    });
  }

  /**
   * LISTEN on a connection of its own (outside the pool). When that
   * connection is lost (server restart, network), it connects again, backing
   * off up to 5 s, and calls `onReconnect`: notifications sent meanwhile are
   * lost, so the listener reads again what it follows.
   */
  async listen(channel: string, onPayload: (payload: string) => void, onReconnect?: () => void): Promise<() => Promise<void>> {
    let stopped = false;
    let client: Client | undefined;
    const connect = async (): Promise<void> => {
      const c = new Client(this.config);
      c.on('notification', (n) => {
        if (n.channel === channel) onPayload(n.payload ?? '');
      });
      c.on('error', () => {});
      c.on('end', () => {
        if (client === c) client = undefined;
        if (!stopped) void reconnect();
      });
      await c.connect();
      await c.query(`LISTEN ${quoteIdentifier(channel)}`);
      client = c;
      this.listeners.add(c);
    };
    const reconnect = async (): Promise<void> => {
      for (let delay = 100; !stopped; delay = Math.min(delay * 2, 5000)) {
        await new Promise((r) => setTimeout(r, delay).unref());
        if (stopped) return;
        try {
          await connect();
          onReconnect?.();
          return;
        } catch {
          // The server is not back yet.
        }
      }
    };
    await connect();
    return async () => {
      stopped = true;
      const c = client;
      client = undefined;
      if (c) {
        this.listeners.delete(c);
        await c.end().catch(() => {});
      }
    };
  }

  async close(): Promise<void> {
    for (const c of [...this.listeners]) await c.end().catch(() => {});
    this.listeners.clear();
    await this.pool.end();
  }
}

/** A channel or table name as SQL needs it quoted. */
export function quoteIdentifier(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}
