import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { buildZip } from '@host/host-installer/testing';
import { startTestPostgres, type TestPostgres } from '@host/host-store/testing';
import { api, ROOT, startHost, type RunningHost } from '@host/e2e-support';

export const FIXTURES = join(ROOT, 'e2e/test-fixtures');

/**
 * Built hosts on one throwaway PostgreSQL server, set up as docs/operator/cluster.md says: one host key, each
 * replica its own data directory and `HOST_REPLICA_NAME`, and (with `sharedPluginData`) plugin-data/ on a
 * volume they all mount (here: one directory each data directory links to).
 */
export interface ReplicaSet {
  pg: TestPostgres;
  /** The database's URL, as each replica has it in HOST_DATABASE_URL. */
  url: string;
  work: string;
  names: readonly string[];
  dataDirs: readonly string[];
  /** The running replicas, by index of `names` (a replica started again replaces its entry). */
  hosts: RunningHost[];
  /** A client of the replicas' database, for what the tests read of the tables. */
  db: Client;
  /** The shared plugin-data/ (with `sharedPluginData`). */
  pluginData: string;
  /** Starts replica `i` (again) on its data directory under its name. */
  start(i: number, options?: { nodeArgs?: string[] }): Promise<RunningHost>;
  close(): Promise<void>;
}

export async function startReplicas(o: {
  names: readonly string[];
  database: string;
  /** A byte (two hex digits) the host key repeats: each suite its own key. */
  keyByte: string;
  sharedPluginData?: boolean;
  env?: Record<string, string>;
}): Promise<ReplicaSet> {
  const pg = await startTestPostgres();
  const work = mkdtempSync(join(tmpdir(), `e2e-cluster-${o.database}-`));
  writeFileSync(join(work, 'host.key'), o.keyByte.repeat(32) + '\n', { mode: 0o600 });
  const url = await pg.createDatabase(o.database);
  const env = { ...o.env, HOST_DATABASE_URL: url, HOST_KEY_FILE: join(work, 'host.key') };
  const pluginData = join(work, 'shared-plugin-data');
  if (o.sharedPluginData) mkdirSync(pluginData);
  const dataDirs = o.names.map((name) => {
    const dir = join(work, name);
    mkdirSync(dir);
    if (o.sharedPluginData) symlinkSync(pluginData, join(dir, 'plugin-data'));
    return dir;
  });
  const hosts: RunningHost[] = [];
  const start = async (i: number, options: { nodeArgs?: string[] } = {}) =>
    (hosts[i] = await startHost(dataDirs[i]!, { ...env, HOST_REPLICA_NAME: o.names[i]! }, [], options));
  const db = new Client({ connectionString: url });
  // A suite may stop the server on purpose: the idle client's lost connection is no error of its own (a query fails then).
  db.on('error', () => undefined);
  const set: ReplicaSet = {
    pg,
    url,
    work,
    names: o.names,
    dataDirs,
    hosts,
    db,
    pluginData,
    start,
    close: async () => {
      for (const h of hosts) {
        try {
          process.kill(h.child.pid!, 'SIGCONT'); // a frozen one ends too
        } catch {
          // Ended already.
        }
        await h.stop('SIGKILL').catch(() => undefined);
      }
      await db.end().catch(() => undefined);
      await pg.stop();
      rmSync(work, { recursive: true, force: true });
    },
  };
  try {
    for (const i of o.names.keys()) await start(i);
    await db.connect();
  } catch (e) {
    await set.close().catch(() => undefined);
    throw e;
  }
  return set;
}

/** The misbehaving fixture plugin under another id, its manifest changed by `edit`. */
export function fixturePackage(pluginId: string, edit: (manifest: Record<string, any>) => void = () => undefined): Buffer {
  const manifest = JSON.parse(readFileSync(join(FIXTURES, 'misbehaving-plugin/manifest.json'), 'utf8'));
  manifest.pluginId = pluginId;
  edit(manifest);
  return buildZip([
    { name: 'manifest.json', data: JSON.stringify(manifest) },
    { name: 'plugin.mjs', data: readFileSync(join(FIXTURES, 'misbehaving-plugin/plugin.mjs')) },
  ]);
}

/** A console message from one user in one group, through `host`. */
export const chat = (host: RunningHost, text: string) =>
  api(host, 'POST', '/api/console/messages', {
    conversation: { type: 'group', id: 'room' },
    sender: { id: 'u1', displayName: 'Ann' },
    text,
  });

export type PluginView = {
  pluginId: string;
  version: string;
  transport: string;
  enabled: boolean;
  state: string;
  runtime?: { replica?: string; pid?: number };
};

export const pluginsOf = async (host: RunningHost) => (await api(host, 'GET', '/api/plugins')).body.plugins as PluginView[];

/** The replica `host` says runs `pluginId`, while it says the plugin is running. */
export const runningOn = async (host: RunningHost, pluginId: string): Promise<string | undefined> => {
  const p = (await pluginsOf(host)).find((x) => x.pluginId === pluginId);
  return p?.state === 'running' ? p.runtime?.replica : undefined;
};
