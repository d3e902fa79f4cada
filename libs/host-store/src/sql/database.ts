import { Worker } from 'node:worker_threads';
import { join } from 'node:path';
import { BUNDLED_TEMPLATE_DIR, EMBEDDED_INITDB_PARAMS, seedFromTemplate, writeTemplate } from './embedded-template';
import { EMBEDDED_WORKER_SOURCE } from './embedded-worker';
import { migrate } from './migrations';
import {
  backoffDelay,
  isConnectionError,
  storeUnavailable,
  type BackoffPolicy,
  type StoreAvailability,
  type StoreAvailabilityState,
} from '@host/host-core';
import { Client, Pool, type ClientConfig, type PoolClient } from 'pg';

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
  // Statements reach the embedded database with their parameters as quoted literals (see inline-parameters.ts),
  // which relies on a backslash in a literal being an ordinary character.
  'standard_conforming_strings=on',
  // The worker prepares each query text once (see embedded-worker.ts); a generic plan is made once and kept,
  // where PostgreSQL's default would plan the first five calls of each again and then weigh the two.
  'plan_cache_mode=force_generic_plan',
  // Every join of the host's statements matches a batch of keys (a few rows from jsonb_to_recordset, which
  // PostgreSQL guesses at 100) against a table's primary key. Left to costs, the planner hashes the whole table
  // for it once the table holds a few thousand rows (host_event_replies: 28 ms a statement at 6,000 rows,
  // against 1.9 ms through the index); with hash and merge joins priced out it walks the index, and a statement
  // that has no other way still gets one.
  'enable_hashjoin=off',
  'enable_mergejoin=off',
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

/**
 * How the listening connection is made again after it was lost: from 100 ms,
 * doubling up to 5 s, less up to half at random, so the replicas of a cluster
 * that lost the server together come back spread over the wait, not at once.
 */
export const LISTEN_RECONNECT_BACKOFF: BackoffPolicy = { baseMilliseconds: 100, maxMilliseconds: 5_000, jitter: 0.5 };

/** How long a connection to the server may take to open; past it, the statement fails with a connection error. */
export const CONNECT_TIMEOUT_MILLISECONDS = 10_000;

/** A channel's subscriber: its notifications, and what to do after some may have been lost. */
interface Subscription {
  onPayload: (payload: string) => void;
  onReconnect?: () => void;
}

/**
 * The one connection outside the pool that LISTENs on every channel of the
 * host. When it is lost (server restart, failover, network), one loop makes
 * it again, waiting LISTEN_RECONNECT_BACKOFF between attempts, and tells
 * every subscriber; there is never more than this connection and the attempt
 * in progress, however long the server is away.
 */
class NotificationConnection {
  private client: Client | undefined;
  private readonly channels = new Map<string, Set<Subscription>>();
  /** The reconnect loop, while one runs. */
  private reconnecting: Promise<void> | undefined;
  private closed = false;
  private wake: (() => void) | undefined;

  constructor(
    private readonly config: ClientConfig,
    private readonly policy: BackoffPolicy,
    private readonly onConnected: (connected: boolean, error?: unknown) => void,
  ) {}

  /** Subscribes to `channel`; the first subscriber connects (and fails when the server cannot be reached). */
  async subscribe(channel: string, sub: Subscription): Promise<() => Promise<void>> {
    if (this.closed) throw new Error('The database is closed.');
    let subs = this.channels.get(channel);
    const first = !subs;
    if (!subs) this.channels.set(channel, (subs = new Set()));
    subs.add(sub);
    try {
      if (this.client) {
        if (first) await this.client.query(`LISTEN ${quoteIdentifier(channel)}`);
      } else if (!this.reconnecting) {
        await this.open();
      }
      // Else the reconnect loop listens on every channel subscribed by the time it connects.
    } catch (e) {
      this.unsubscribe(channel, sub);
      throw e;
    }
    return async () => {
      this.unsubscribe(channel, sub);
      if (this.channels.size === 0) await this.drop();
    };
  }

  /** Ends the connection and the reconnect loop (an attempt in progress ends on its own, within the connect timeout). */
  async close(): Promise<void> {
    this.closed = true;
    this.wake?.();
    await this.drop();
  }

  private unsubscribe(channel: string, sub: Subscription): void {
    const subs = this.channels.get(channel);
    subs?.delete(sub);
    if (subs?.size === 0) {
      this.channels.delete(channel);
      this.client?.query(`UNLISTEN ${quoteIdentifier(channel)}`).catch(() => undefined);
    }
  }

  private async drop(): Promise<void> {
    const c = this.client;
    this.client = undefined;
    if (c) await c.end().catch(() => undefined);
  }

  /** Makes the connection, listening on every channel; or fails with its socket closed. */
  private async open(): Promise<void> {
    const c = new Client(this.config);
    let lost = false;
    c.on('error', () => {});
    c.on('notification', (n) => {
      for (const sub of this.channels.get(n.channel) ?? []) sub.onPayload(n.payload ?? '');
    });
    // Only a connection that was made is made again: a failed attempt also ends, and its end belongs to the loop that made it.
    c.on('end', () => {
      lost = true;
      if (this.client !== c) return;
      this.client = undefined;
      this.onConnected(false);
      this.startReconnecting();
    });
    try {
      await c.connect();
      for (const channel of this.channels.keys()) await c.query(`LISTEN ${quoteIdentifier(channel)}`);
      if (lost) throw new Error('Connection terminated while listening');
    } catch (e) {
      void c.end().catch(() => undefined);
      this.onConnected(false, e);
      throw e;
    }
    if (this.closed) {
      void c.end().catch(() => undefined);
      return;
    }
    this.client = c;
    this.onConnected(true);
  }

  private startReconnecting(): void {
    if (this.reconnecting || this.closed || this.channels.size === 0) return;
    this.reconnecting = this.reconnect().finally(() => (this.reconnecting = undefined));
  }

  private async reconnect(): Promise<void> {
    for (let attempt = 0; !this.closed && this.channels.size > 0; attempt++) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, backoffDelay(this.policy, attempt));
        timer.unref();
        this.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.wake = undefined;
      if (this.closed || this.channels.size === 0) return;
      try {
        await this.open();
      } catch {
        continue; // The server is not back yet.
      }
      if (this.closed) return;
      for (const subs of [...this.channels.values()]) for (const sub of [...subs]) sub.onReconnect?.();
      return;
    }
  }
}

/**
 * A PostgreSQL server reached through a small connection pool. While the
 * server cannot be reached, statements fail at once with STORE_UNAVAILABLE
 * (or within the connect timeout when nothing answers at all) and
 * `current()` says since when.
 */
export class ServerDatabase implements SqlDatabase, StoreAvailability {
  readonly kind = 'postgres' as const;
  private readonly notifications: NotificationConnection;
  private unreachable: { since: Date; reason: string } | undefined;

  private constructor(
    private readonly pool: Pool,
    config: ClientConfig,
    listenBackoff: BackoffPolicy,
  ) {
    this.notifications = new NotificationConnection(config, listenBackoff, (connected, error) =>
      connected ? this.noteReachable() : this.noteUnreachable(error ?? new Error('Connection terminated')),
    );
  }

  /**
   * Connects to `url` (a `postgres://` URL) and checks that the server answers.
   * The pool holds at most `maxConnections` (default 8); with the listening
   * connection, that is every connection the host makes to the server,
   * whether it answers or not.
   */
  static async open(
    url: string,
    options: { maxConnections?: number; password?: string; listenBackoff?: BackoffPolicy } = {},
  ): Promise<ServerDatabase> {
    const config: ClientConfig = {
      connectionString: url,
      ...(options.password !== undefined ? { password: options.password } : {}),
      connectionTimeoutMillis: CONNECT_TIMEOUT_MILLISECONDS,
      // A server that vanished without closing its connections (a partition, a failover) is found out by the kernel.
      keepAlive: true,
    };
    const pool = new Pool({ ...config, max: options.maxConnections ?? 8 });
    // An idle connection the server ended (restart, failover) is dropped and replaced on next use.
    pool.on('error', () => {});
    try {
      await pool.query('SELECT 1');
    } catch (e) {
      await pool.end().catch(() => {});
      throw new DatabaseUnavailableError(describeDatabaseUrl(url), (e as Error).message);
    }
    return new ServerDatabase(pool, config, options.listenBackoff ?? LISTEN_RECONNECT_BACKOFF);
  }

  /** What the statements and the listening connection last found: whether the server answers. */
  current(): StoreAvailabilityState {
    const u = this.unreachable;
    return u ? { reachable: false, since: u.since.toISOString(), reason: u.reason } : { reachable: true };
  }

  /** Asks the server (`SELECT 1`), within `timeoutMilliseconds`; answers what it found. */
  async check(timeoutMilliseconds = 2_000): Promise<StoreAvailabilityState> {
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        this.query('SELECT 1'),
        new Promise((_, reject) => {
          timer = setTimeout(() => reject(new Error(`the server did not answer within ${timeoutMilliseconds} ms`)), timeoutMilliseconds);
        }),
      ]);
    } catch (e) {
      // A connection error was noted by the query itself; a server that says nothing in time is unreachable too.
      if (this.current().reachable) this.noteUnreachable(e);
    } finally {
      clearTimeout(timer);
    }
    return this.current();
  }

  async query<T>(text: string, params?: unknown[]): Promise<T[]> {
    return this.watch(async () => (await this.pool.query(text, params as unknown[])).rows as T[]);
  }

  async transaction<T>(work: (tx: SqlQueryable) => Promise<T>): Promise<T> {
    const client: PoolClient = await this.watch(() => this.pool.connect());
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
      if (isConnectionError(e)) throw this.unavailable(e);
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
   * LISTEN on the one connection outside the pool that every channel shares.
   * When that connection is lost, it is made again (see
   * NotificationConnection) and `onReconnect` is called: notifications sent
   * meanwhile are lost, so the listener reads again what it follows.
   */
  listen(channel: string, onPayload: (payload: string) => void, onReconnect?: () => void): Promise<() => Promise<void>> {
    return this.notifications.subscribe(channel, { onPayload, onReconnect });
  }

  async close(): Promise<void> {
    await this.notifications.close();
    await this.pool.end();
  }

  /** Runs `work`, noting whether the server answered; a connection error becomes STORE_UNAVAILABLE. */
  private async watch<T>(work: () => Promise<T>): Promise<T> {
    try {
      const result = await work();
      this.noteReachable();
      return result;
    } catch (e) {
      if (isConnectionError(e)) throw this.unavailable(e);
      this.noteReachable();
      throw e;
    }
  }

  /** Notes that the server did not answer; answers the error that says so (the driver's error as its cause). */
  private unavailable(e: unknown): Error {
    this.noteUnreachable(e);
    return Object.assign(storeUnavailable(this.current()), { cause: e });
  }

  private noteReachable(): void {
    this.unreachable = undefined;
  }

  private noteUnreachable(e: unknown): void {
    const reason = e instanceof Error ? e.message || (e as { code?: string }).code || e.name : String(e);
    if (this.unreachable) this.unreachable.reason = reason;
    else this.unreachable = { since: new Date(), reason };
  }
}

/** A channel or table name as SQL needs it quoted. */
export function quoteIdentifier(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}
