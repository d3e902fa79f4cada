import type { SqlDatabase, SqlQueryable } from './database';

/** The PostgreSQL channel every store write announces itself on. */
export const CHANGES_CHANNEL = 'host_changes';

/** What changed: a plugin's record, its settings, or a host metadata key. Payloads name ids, never values. */
export type StoreChange =
  | { kind: 'plugin'; pluginId: string }
  | { kind: 'settings'; pluginId: string }
  | { kind: 'meta'; key: string }
  /** Changes may have been missed (the listening connection was lost and made again): read everything again. */
  | { kind: 'all' };

/**
 * Announces `change` to every host listening on the database. Called inside
 * the transaction of the write: PostgreSQL delivers it only if that commits,
 * and after the change is visible.
 */
export async function announce(tx: SqlQueryable, change: StoreChange): Promise<void> {
  await tx.query('SELECT pg_notify($1, $2)', [CHANGES_CHANNEL, JSON.stringify(change)]);
}

function parseChange(payload: string): StoreChange | undefined {
  try {
    const c = JSON.parse(payload) as StoreChange;
    if (c.kind === 'plugin' || c.kind === 'settings') return typeof c.pluginId === 'string' ? c : undefined;
    if (c.kind === 'meta') return typeof c.key === 'string' ? c : undefined;
  } catch {
    // Not one of ours.
  }
  return undefined;
}

/** Calls `onChange` for every change any host announces; answers the function that stops listening. */
export function watchChanges(db: SqlDatabase, onChange: (change: StoreChange) => void): Promise<() => Promise<void>> {
  return db.listen(
    CHANGES_CHANNEL,
    (payload) => {
      const change = parseChange(payload);
      if (change) onChange(change);
    },
    () => onChange({ kind: 'all' }),
  );
}
