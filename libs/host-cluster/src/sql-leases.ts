import type { RuntimeStatus } from '@host/host-core';
import type { SqlDatabase } from '@host/host-store';
import { broadcast, QUEUE_CHANNEL } from './queue-notices';

/**
 * The lease timings of docs/operator/cluster.md: a holder renews its leases
 * every `renewMilliseconds` for `ttlMilliseconds`; a lease not renewed in that
 * time may be taken by another replica at its next round. Takeover after a
 * holder dies: at most ttl + renew, plus the plugin's start.
 */
export const LEASE_TIMINGS = { renewMilliseconds: 3_000, ttlMilliseconds: 10_000 } as const;

/** One plugin's lease as every replica reads it. */
export interface PluginLease {
  pluginId: string;
  /** The replica holding it; empty after it was given up. */
  holder: string;
  /** The holder's runtime status of the plugin as it last published it. */
  status: RuntimeStatus | null;
  /** Whether the lease is still valid by the database's clock. */
  live: boolean;
}

/**
 * Leases of stdio plugins in `host_plugin_leases`: which replica runs each
 * one. A replica takes a lease only when nobody holds it or it expired, so at
 * most one replica holds a live lease of a plugin at a time.
 */
export class SqlLeases {
  /**
   * The epoch of each lease this process took: a lease taken from another
   * holder (or given up before) gets the next epoch, so a replica that froze
   * past its lease and wakes finds its epoch stale in every fenced statement
   * ({@link SqlDeliveryQueue.claim}, recordReply, recordSend) and does nothing
   * more for the plugin.
   */
  readonly epochs = new Map<string, number>();

  constructor(
    private readonly db: SqlDatabase,
    readonly replica: string,
    private readonly ttlMilliseconds: number = LEASE_TIMINGS.ttlMilliseconds,
  ) {}

  /**
   * Says this replica is alive until a lease's time from now (`host_replicas`):
   * another replica takes the inbox of one whose heartbeat ended
   * ({@link SqlEventInbox.adoptOrphans}). Made at every lease round.
   */
  async heartbeat(): Promise<void> {
    await this.db.query(
      `INSERT INTO host_replicas (name, expires_at) VALUES ($1, now() + make_interval(secs => $2::double precision / 1000))
       ON CONFLICT (name) DO UPDATE SET expires_at = EXCLUDED.expires_at, seen_at = now()`,
      [this.replica, this.ttlMilliseconds],
    );
  }

  /**
   * Takes the lease of each of `pluginIds` that is free or expired (or
   * already ours); answers those now held. `force`: whoever holds it (an
   * operator starts the plugin here after stopping it).
   */
  async acquire(pluginIds: readonly string[], force = false): Promise<string[]> {
    if (pluginIds.length === 0) return [];
    const rows = await this.db.query<{ plugin_id: string; epoch: string }>(
      `INSERT INTO host_plugin_leases (plugin_id, holder, expires_at)
         SELECT id, $2, now() + make_interval(secs => $3::double precision / 1000) FROM unnest($1::text[]) AS id
       ON CONFLICT (plugin_id) DO UPDATE SET holder = EXCLUDED.holder, expires_at = EXCLUDED.expires_at, updated_at = now(),
         status = CASE WHEN host_plugin_leases.holder = EXCLUDED.holder THEN host_plugin_leases.status ELSE NULL END,
         epoch = CASE WHEN host_plugin_leases.holder = EXCLUDED.holder THEN host_plugin_leases.epoch ELSE host_plugin_leases.epoch + 1 END
       WHERE $4 OR host_plugin_leases.holder = EXCLUDED.holder OR host_plugin_leases.expires_at < now()
       RETURNING plugin_id, epoch`,
      [pluginIds, this.replica, this.ttlMilliseconds, force],
    );
    for (const r of rows) this.epochs.set(r.plugin_id, Number(r.epoch));
    return rows.map((r) => r.plugin_id);
  }

  /** Extends every lease this replica holds; answers the plugins whose lease it still holds. */
  async renew(): Promise<string[]> {
    const rows = await this.db.query<{ plugin_id: string; epoch: string }>(
      `UPDATE host_plugin_leases SET expires_at = now() + make_interval(secs => $2::double precision / 1000)
        WHERE holder = $1 RETURNING plugin_id, epoch`,
      [this.replica, this.ttlMilliseconds],
    );
    for (const r of rows) this.epochs.set(r.plugin_id, Number(r.epoch));
    return rows.map((r) => r.plugin_id);
  }

  /**
   * Gives up the lease of `pluginId` if this replica holds it, leaving the
   * plugin's last `status` for every replica to show. `holdMilliseconds`:
   * nobody takes it (except by force) for that long — an operator's stop, so
   * no replica starts the plugin again before its record says it is disabled.
   */
  async release(pluginId: string, status?: RuntimeStatus, holdMilliseconds = 0): Promise<void> {
    this.epochs.delete(pluginId);
    await this.db.transaction(async (tx) => {
      const rows = await tx.query(
        `UPDATE host_plugin_leases SET holder = '', expires_at = now() + make_interval(secs => $4::double precision / 1000),
                status = coalesce($3::jsonb, status), updated_at = now()
          WHERE plugin_id = $1 AND holder = $2 RETURNING plugin_id`,
        [pluginId, this.replica, status === undefined ? null : JSON.stringify(status), holdMilliseconds],
      );
      if (rows.length) await tx.query('SELECT pg_notify($1, $2)', [QUEUE_CHANNEL, broadcast({ k: 'lease', p: pluginId })]);
    });
  }

  /** Records the holder's runtime status of `pluginId` and tells the other replicas. */
  async publishStatus(pluginId: string, status: RuntimeStatus): Promise<void> {
    await this.db.transaction(async (tx) => {
      const rows = await tx.query('UPDATE host_plugin_leases SET status = $3 WHERE plugin_id = $1 AND holder = $2 RETURNING plugin_id', [
        pluginId,
        this.replica,
        JSON.stringify(status),
      ]);
      if (rows.length) await tx.query('SELECT pg_notify($1, $2)', [QUEUE_CHANNEL, broadcast({ k: 'lease', p: pluginId })]);
    });
  }

  /** Every lease, live or expired. */
  async list(): Promise<PluginLease[]> {
    const rows = await this.db.query<{ plugin_id: string; holder: string; status: RuntimeStatus | null; live: boolean }>(
      'SELECT plugin_id, holder, status, expires_at >= now() AS live FROM host_plugin_leases',
    );
    return rows.map((r) => ({ pluginId: r.plugin_id, holder: r.holder, status: r.status, live: r.live }));
  }
}

/**
 * The SQL condition of a fenced statement: no epoch given (a host alone, whose
 * lease nobody else takes), or this replica still holds the plugin's lease at
 * that epoch. Arguments are SQL expressions (parameters or columns).
 */
export const leaseFence = (plugin: string, epoch: string, replica: string): string =>
  `(${epoch}::bigint IS NULL OR EXISTS (SELECT 1 FROM host_plugin_leases l WHERE l.plugin_id = ${plugin} AND l.holder = ${replica} AND l.epoch = ${epoch}::bigint))`;
