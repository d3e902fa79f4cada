import type { AdminSessionBounds, AdminSessionStore, StoredAdminSession } from '@host/host-core';
import type { SqlDatabase } from './database';

type Row = { token_sha256: string; csrf_token: string; created_ms: string | number; last_used_ms: string | number };
const fromRow = (r: Row): StoredAdminSession => ({
  tokenSha256: r.token_sha256,
  csrfToken: r.csrf_token,
  createdMs: Number(r.created_ms),
  lastUsedMs: Number(r.last_used_ms),
});

/**
 * Admin app sessions in `host_admin_sessions`, keyed by the SHA-256 of the
 * session's secret: every host sharing the database reads them on each
 * request, so a session begun through one replica works on all, and a
 * sign-out through one ends it on all at once.
 */
export class SqlAdminSessionStore implements AdminSessionStore {
  constructor(private readonly db: SqlDatabase) {}

  async add(session: StoredAdminSession, b: AdminSessionBounds): Promise<void> {
    await this.db.transaction(async (tx) => {
      // One sign-in at a time across replicas, so the bound holds (the lock ends with the transaction).
      await tx.query("SELECT pg_advisory_xact_lock(hashtext('host_admin_sessions'))");
      await tx.query('DELETE FROM host_admin_sessions WHERE created_ms <= $1 OR last_used_ms <= $2', [
        b.now - b.lifetimeMs,
        b.now - b.idleMs,
      ]);
      await tx.query(
        `DELETE FROM host_admin_sessions WHERE token_sha256 IN (
           SELECT token_sha256 FROM host_admin_sessions ORDER BY last_used_ms DESC, created_ms DESC OFFSET $1)`,
        [Math.max(0, b.maxSessions - 1)],
      );
      await tx.query('INSERT INTO host_admin_sessions (token_sha256, csrf_token, created_ms, last_used_ms) VALUES ($1, $2, $3, $4)', [
        session.tokenSha256,
        session.csrfToken,
        session.createdMs,
        session.lastUsedMs,
      ]);
    });
  }

  async get(tokenSha256: string): Promise<StoredAdminSession | undefined> {
    const rows = await this.db.query<Row>(
      'SELECT token_sha256, csrf_token, created_ms, last_used_ms FROM host_admin_sessions WHERE token_sha256 = $1',
      [tokenSha256],
    );
    return rows[0] && fromRow(rows[0]);
  }

  async touch(tokenSha256: string, lastUsedMs: number): Promise<void> {
    await this.db.query('UPDATE host_admin_sessions SET last_used_ms = greatest(last_used_ms, $2) WHERE token_sha256 = $1', [
      tokenSha256,
      lastUsedMs,
    ]);
  }

  async remove(tokenSha256: string): Promise<boolean> {
    return (
      (await this.db.query('DELETE FROM host_admin_sessions WHERE token_sha256 = $1 RETURNING token_sha256', [tokenSha256])).length > 0
    );
  }

  async clear(): Promise<number> {
    return (await this.db.query('DELETE FROM host_admin_sessions RETURNING token_sha256')).length;
  }

  async count(): Promise<number> {
    const rows = await this.db.query<{ n: string | number }>('SELECT count(*) AS n FROM host_admin_sessions');
    return Number(rows[0]?.n ?? 0);
  }
}
