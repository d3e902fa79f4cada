import type { PGlite } from '@electric-sql/pglite';
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
  /** Calls `onPayload` for every notification on `channel` (PostgreSQL LISTEN); answers the function that stops it. */
  listen(channel: string, onPayload: (payload: string) => void): Promise<() => Promise<void>>;
  close(): Promise<void>;
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

/**
 * PGlite, loaded when first needed: hosts on a server or on files never load
 * it. It loads its parts with `import()`, so Jest runs the suites that use it
 * with --experimental-vm-modules (the test target's NODE_OPTIONS).
 */
function loadPGlite(): typeof PGlite {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return (require('@electric-sql/pglite') as typeof import('@electric-sql/pglite')).PGlite;
}

/** PostgreSQL compiled to WebAssembly, running in this process on `<dir>`. */
export class EmbeddedDatabase implements SqlDatabase {
  readonly kind = 'embedded' as const;

  private constructor(
    private readonly db: PGlite,
    readonly dir: string,
  ) {}

  /** Opens (creating on first use) the database in `dir`. */
  static async open(dir: string): Promise<EmbeddedDatabase> {
    try {
      const db = await loadPGlite().create(dir);
      return new EmbeddedDatabase(db, dir);
    } catch (e) {
      throw new DatabaseUnavailableError(
        dir,
        `${(e as Error).message}. Another process may be using it, or it was damaged; restore the data directory from a backup.`,
      );
    }
  }

  async query<T>(text: string, params?: unknown[]): Promise<T[]> {
    return (await this.db.query<T>(text, params)).rows;
  }

  transaction<T>(work: (tx: SqlQueryable) => Promise<T>): Promise<T> {
    return this.db.transaction((tx) =>
      work({ query: async <R>(text: string, params?: unknown[]) => (await tx.query<R>(text, params)).rows }),
    );
  }

  listen(channel: string, onPayload: (payload: string) => void): Promise<() => Promise<void>> {
    return this.db.listen(channel, onPayload);
  }

  async close(): Promise<void> {
    if (!this.db.closed) await this.db.close();
  }
}

/** A PostgreSQL server reached through a small connection pool. */
export class ServerDatabase implements SqlDatabase {
  readonly kind = 'postgres' as const;
  private readonly listeners: Client[] = [];

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
    try {
      await client.query('BEGIN');
      const result = await work({ query: async <R>(text: string, params?: unknown[]) => (await client.query(text, params)).rows as R[] });
      await client.query('COMMIT');
      return result;
    } catch (e) {
      await client.query('ROLLBACK').catch(() => (broken = true));
      throw e;
    } finally {
      client.release(broken);
    }
  }

  async listen(channel: string, onPayload: (payload: string) => void): Promise<() => Promise<void>> {
    // LISTEN holds a session: one connection of its own, outside the pool.
    const client = new Client(this.config);
    client.on('error', () => {});
    await client.connect();
    client.on('notification', (n) => {
      if (n.channel === channel) onPayload(n.payload ?? '');
    });
    await client.query(`LISTEN ${quoteIdentifier(channel)}`);
    this.listeners.push(client);
    return async () => {
      const i = this.listeners.indexOf(client);
      if (i >= 0) this.listeners.splice(i, 1);
      await client.end().catch(() => {});
    };
  }

  async close(): Promise<void> {
    for (const c of this.listeners.splice(0)) await c.end().catch(() => {});
    await this.pool.end();
  }
}

/** A channel or table name as SQL needs it quoted. */
export function quoteIdentifier(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}
