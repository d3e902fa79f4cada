import { DEFAULT_MAX_REPLAY_ENTRIES, type ReplayStore, type ReplayStoreBounds } from '@host/host-core';
import type { SqlDatabase, SqlQueryable } from './database';

export interface SqlReplayStoreOptions extends ReplayStoreBounds {
  /** How often a claim first drops expired keys and those beyond maxEntries (default one minute). */
  pruneEveryMilliseconds?: number;
  /** Where a failed pruning is reported (it is tried again later). */
  onError?: (error: Error) => void;
}

/** Thrown inside the claim's transaction to roll back the keys it did record. */
class AlreadySeen extends Error {}

/**
 * The replay memory in `host_webhook_replays`. A claim inserts its keys in
 * one transaction, each `ON CONFLICT DO UPDATE ... WHERE` the remembered one
 * has expired, and counts the rows it got back: fewer than its keys means one
 * was remembered, and the transaction is rolled back, so nothing of a replay
 * stays. PostgreSQL makes a second insert of a key wait for the first
 * transaction's end, so of two hosts claiming one key at once exactly one
 * gets it. Keys go in sorted, so two claims sharing several keys never
 * deadlock. Expired keys and the oldest beyond maxEntries are dropped by the
 * first claim of every minute.
 */
export class SqlReplayStore implements ReplayStore {
  private readonly maxEntries: number;
  private readonly pruneEveryMs: number;
  private lastPruneMs = -Infinity;

  constructor(
    private readonly db: SqlDatabase,
    private readonly o: SqlReplayStoreOptions = {},
  ) {
    this.maxEntries = Math.max(1, o.maxEntries ?? DEFAULT_MAX_REPLAY_ENTRIES);
    this.pruneEveryMs = o.pruneEveryMilliseconds ?? 60_000;
  }

  async claim(scope: string, keys: readonly string[], nowMs: number, expiresMs: number): Promise<boolean> {
    const unique = [...new Set(keys)].sort();
    if (nowMs - this.lastPruneMs >= this.pruneEveryMs) {
      this.lastPruneMs = nowMs;
      await this.prune(nowMs).catch((e: unknown) => this.o.onError?.(e instanceof Error ? e : new Error(String(e))));
    }
    const insert = (tx: SqlQueryable) =>
      tx.query(
        `INSERT INTO host_webhook_replays (scope, key, expires_ms)
         SELECT $1, k, $3 FROM unnest($2::text[]) AS k ORDER BY k
         ON CONFLICT (scope, key) DO UPDATE SET expires_ms = EXCLUDED.expires_ms
           WHERE host_webhook_replays.expires_ms <= $4
         RETURNING key`,
        [scope, unique, expiresMs, nowMs],
      );
    // One key needs no transaction: one statement is all or nothing by itself.
    if (unique.length === 1) return (await insert(this.db)).length === 1;
    try {
      await this.db.transaction(async (tx) => {
        if ((await insert(tx)).length < unique.length) throw new AlreadySeen();
      });
      return true;
    } catch (e) {
      if (e instanceof AlreadySeen) return false;
      throw e;
    }
  }

  async forget(scope: string, keys: readonly string[]): Promise<void> {
    await this.db.query('DELETE FROM host_webhook_replays WHERE scope = $1 AND key = ANY($2::text[])', [scope, [...keys]]);
  }

  /** Keys remembered now, expired ones included until the next pruning. */
  async count(): Promise<number> {
    const rows = await this.db.query<{ n: string | number }>('SELECT count(*) AS n FROM host_webhook_replays');
    return Number(rows[0]?.n ?? 0);
  }

  /** Drops expired keys, then the oldest beyond maxEntries. */
  async prune(nowMs: number): Promise<void> {
    await this.db.query('DELETE FROM host_webhook_replays WHERE expires_ms <= $1', [nowMs]);
    await this.db.query(
      `DELETE FROM host_webhook_replays WHERE (scope, key) IN (
         SELECT scope, key FROM host_webhook_replays ORDER BY expires_ms DESC OFFSET $1)`,
      [this.maxEntries],
    );
  }
}
