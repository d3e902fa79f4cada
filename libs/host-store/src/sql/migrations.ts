import type { SqlDatabase, SqlQueryable } from './database';

/** One step of the schema. Steps are applied in order, each once, in one transaction with its bookkeeping. */
export interface Migration {
  version: number;
  name: string;
  sql: string;
  /**
   * Whether hosts that do not know this step can no longer use the database
   * (a column they write was dropped, say). Additive steps leave it false, so
   * replicas can be upgraded one at a time (docs/operator/cluster.md).
   */
  breaksOlderHosts?: boolean;
}

/** The schema, as the host of this version knows it. Never edit a step once released: add one. */
export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'registry, settings, pending updates, event log, package archives',
    sql: `
      CREATE TABLE host_plugins (
        plugin_id  text PRIMARY KEY,
        transport  text NOT NULL CHECK (transport IN ('stdio-jsonrpc', 'http')),
        record     jsonb NOT NULL,
        version    bigint NOT NULL DEFAULT 1,
        updated_at timestamptz NOT NULL DEFAULT now()
      );
      CREATE TABLE host_meta (
        key   text PRIMARY KEY,
        value text NOT NULL
      );
      CREATE TABLE host_plugin_settings (
        plugin_id text PRIMARY KEY,
        sealed    text NOT NULL,
        version   bigint NOT NULL DEFAULT 1
      );
      CREATE TABLE host_pending_updates (
        id          text PRIMARY KEY,
        archive     bytea NOT NULL,
        description jsonb NOT NULL,
        saved_at    timestamptz NOT NULL DEFAULT now()
      );
      CREATE SEQUENCE host_events_seq;
      CREATE TABLE host_events (
        event_id text PRIMARY KEY,
        seq      bigint NOT NULL DEFAULT nextval('host_events_seq'),
        replica  text NOT NULL,
        record   jsonb NOT NULL
      );
      CREATE INDEX host_events_by_seq ON host_events (seq);
      CREATE TABLE host_package_archives (
        sha256   text PRIMARY KEY CHECK (sha256 ~ '^[0-9a-f]{64}$'),
        bytes    bytea NOT NULL,
        size     bigint NOT NULL,
        saved_at timestamptz NOT NULL DEFAULT now()
      );
    `,
  },
  {
    version: 2,
    name: 'plugin leases, the delivery queue and recorded replies (replicas)',
    sql: `
      CREATE TABLE host_plugin_leases (
        plugin_id  text PRIMARY KEY,
        holder     text NOT NULL,
        expires_at timestamptz NOT NULL,
        status     jsonb,
        updated_at timestamptz NOT NULL DEFAULT now()
      );
      CREATE SEQUENCE host_event_queue_seq;
      CREATE TABLE host_event_queue (
        event_id   text NOT NULL,
        plugin_id  text NOT NULL,
        seq        bigint NOT NULL DEFAULT nextval('host_event_queue_seq'),
        origin     text NOT NULL,
        event      jsonb NOT NULL,
        state      text NOT NULL CHECK (state IN ('pending', 'claimed', 'decided', 'done')),
        claimed_by text,
        attempts   integer NOT NULL DEFAULT 0,
        decision   jsonb,
        completion jsonb,
        created_at timestamptz NOT NULL DEFAULT now(),
        done_at    timestamptz,
        PRIMARY KEY (event_id, plugin_id)
      );
      CREATE INDEX host_event_queue_open ON host_event_queue (plugin_id, seq) WHERE state <> 'done';
      CREATE INDEX host_event_queue_by_seq ON host_event_queue (seq);
      CREATE TABLE host_event_replies (
        event_id  text NOT NULL,
        plugin_id text NOT NULL,
        n         integer NOT NULL,
        sequence  integer NOT NULL,
        outbound  jsonb,
        at        timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (event_id, plugin_id, n),
        UNIQUE (event_id, sequence)
      );
    `,
  },
  {
    version: 3,
    name: 'admin sessions, sends recorded per handling, replies marked sent (replicas)',
    sql: `
      CREATE TABLE host_admin_sessions (
        token_sha256 text PRIMARY KEY CHECK (token_sha256 ~ '^[0-9a-f]{64}$'),
        csrf_token   text NOT NULL,
        created_ms   bigint NOT NULL,
        last_used_ms bigint NOT NULL
      );
      CREATE INDEX host_admin_sessions_by_use ON host_admin_sessions (last_used_ms);
      ALTER TABLE host_event_replies ADD COLUMN request jsonb;
      ALTER TABLE host_event_replies ADD COLUMN claimed_by text;
      ALTER TABLE host_event_replies ADD COLUMN sent_at timestamptz;
      UPDATE host_event_replies SET sent_at = at;
      CREATE INDEX host_event_replies_unsent ON host_event_replies (plugin_id) WHERE sent_at IS NULL;
      CREATE TABLE host_event_sends (
        event_id   text NOT NULL,
        plugin_id  text NOT NULL,
        n          integer NOT NULL,
        digest     text NOT NULL,
        request    jsonb,
        claimed_by text,
        result     jsonb,
        outbound   jsonb,
        sent_at    timestamptz,
        at         timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (event_id, plugin_id, n)
      );
      CREATE INDEX host_event_sends_unsent ON host_event_sends (plugin_id) WHERE sent_at IS NULL;
    `,
  },
  {
    version: 4,
    name: 'webhook replay memory (signed requests already taken, shared by replicas)',
    sql: `
      CREATE TABLE host_webhook_replays (
        scope      text NOT NULL,
        key        text NOT NULL,
        expires_ms bigint NOT NULL,
        PRIMARY KEY (scope, key)
      );
      CREATE INDEX host_webhook_replays_by_expiry ON host_webhook_replays (expires_ms);
    `,
  },
  {
    version: 5,
    name: 'package archives in bounded chunks (one value of a whole archive cost the embedded database gigabytes)',
    sql: `
      ALTER TABLE host_package_archives ALTER COLUMN bytes DROP NOT NULL;
      ALTER TABLE host_package_archives ADD COLUMN chunks integer CHECK (chunks >= 0);
      CREATE TABLE host_package_archive_chunks (
        sha256 text NOT NULL REFERENCES host_package_archives (sha256) ON DELETE CASCADE,
        n      integer NOT NULL CHECK (n >= 0),
        bytes  bytea NOT NULL,
        PRIMARY KEY (sha256, n)
      );
    `,
  },
  {
    version: 6,
    name: 'archives of pending updates in bounded chunks, as package archives',
    sql: `
      ALTER TABLE host_pending_updates ALTER COLUMN archive DROP NOT NULL;
      ALTER TABLE host_pending_updates ADD COLUMN size bigint CHECK (size >= 0);
      ALTER TABLE host_pending_updates ADD COLUMN chunks integer CHECK (chunks >= 0);
      CREATE TABLE host_pending_update_chunks (
        id    text NOT NULL REFERENCES host_pending_updates (id) ON DELETE CASCADE,
        n     integer NOT NULL CHECK (n >= 0),
        bytes bytea NOT NULL,
        PRIMARY KEY (id, n)
      );
    `,
  },
  {
    version: 7,
    name: 'events accepted and not yet logged final (the inbox a restarted host routes again)',
    sql: `
      CREATE TABLE host_event_inbox (
        event_id    text PRIMARY KEY,
        origin      text NOT NULL,
        event       jsonb NOT NULL,
        accepted_at timestamptz NOT NULL DEFAULT now()
      );
      CREATE INDEX host_event_inbox_origin ON host_event_inbox (origin, accepted_at);
    `,
  },
  {
    version: 8,
    name: "plugin records as json, which keeps the order of an object's keys as written (jsonb sorts them, and the admin app showed a manifest's settings out of the author's order)",
    // Records written before keep the order jsonb gave them until they are written again (an update,
    // a reinstall, an HTTP plugin's manifest refresh). Older hosts read and write the column as before.
    sql: `
      ALTER TABLE host_plugins ALTER COLUMN record TYPE json USING record::json;
    `,
  },
  {
    version: 9,
    name: 'lease epochs: a replica that lost a lease while frozen claims and records nothing more for its plugin',
    // Older replicas leave the epoch as it is when they take a lease; a newer one fencing on it then still refuses a
    // replica whose lease moved (the holder differs), so mixed versions stay safe.
    sql: `
      ALTER TABLE host_plugin_leases ADD COLUMN epoch bigint NOT NULL DEFAULT 0;
    `,
  },
  {
    version: 10,
    name: "replicas' heartbeats: the inbox of a replica that stopped beating (and never came back) is taken by a live one",
    // Older replicas write no heartbeat: the events of theirs left unfinished a lease's time are routed again by a
    // newer replica, whose queue rows say what was delivered already (nothing is delivered twice).
    sql: `
      CREATE TABLE host_replicas (
        name       text PRIMARY KEY,
        expires_at timestamptz NOT NULL,
        seen_at    timestamptz NOT NULL DEFAULT now()
      );
    `,
  },
];

/** The database was changed by a newer host in a way this one cannot work with. */
export class SchemaTooNewError extends Error {
  constructor(readonly versions: number[]) {
    super(
      `The database has schema steps ${versions.join(', ')} that this host does not know and that older hosts cannot work with. ` +
        'Run a host of the version that applied them (or newer).',
    );
    this.name = 'SchemaTooNewError';
  }
}

// Any constant: every host takes the same transaction-scoped advisory lock, so two starting at once migrate one after the other.
const MIGRATION_LOCK = 7_310_019;

/** Applies the steps of `migrations` the database lacks; answers the versions applied now. */
export async function migrate(db: SqlDatabase, migrations: readonly Migration[] = MIGRATIONS): Promise<number[]> {
  return db.transaction(async (tx) => {
    await tx.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
    await tx.query(`
      CREATE TABLE IF NOT EXISTS host_schema_migrations (
        version        integer PRIMARY KEY,
        name           text NOT NULL,
        breaks_older   boolean NOT NULL DEFAULT false,
        applied_at     timestamptz NOT NULL DEFAULT now()
      )`);
    const rows = await tx.query<{ version: number; breaks_older: boolean }>('SELECT version, breaks_older FROM host_schema_migrations');
    const known = new Set(migrations.map((m) => m.version));
    const unknownBreaking = rows.filter((r) => !known.has(r.version) && r.breaks_older).map((r) => r.version);
    if (unknownBreaking.length) throw new SchemaTooNewError(unknownBreaking.sort((a, b) => a - b));
    const applied = new Set(rows.map((r) => r.version));
    const now: number[] = [];
    for (const m of [...migrations].sort((a, b) => a.version - b.version)) {
      if (applied.has(m.version)) continue;
      await applyStep(tx, m);
      now.push(m.version);
    }
    return now;
  });
}

async function applyStep(tx: SqlQueryable, m: Migration): Promise<void> {
  // Statements of one step go one at a time: the extended protocol takes one statement per query.
  for (const statement of m.sql
    .split(/;\s*(?:\n|$)/)
    .map((s) => s.trim())
    .filter(Boolean))
    await tx.query(statement);
  await tx.query('INSERT INTO host_schema_migrations (version, name, breaks_older) VALUES ($1, $2, $3)', [
    m.version,
    m.name,
    m.breaksOlderHosts ?? false,
  ]);
}

/** The versions the database has applied, ascending. */
export async function appliedMigrations(db: SqlQueryable): Promise<number[]> {
  const rows = await db.query<{ version: number }>('SELECT version FROM host_schema_migrations ORDER BY version');
  return rows.map((r) => r.version);
}
