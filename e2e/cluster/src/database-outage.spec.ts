import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { api, buildHost, type RunningHost } from '@host/e2e-support';
import { chat, startReplicas, type ReplicaSet } from './replica-set';
import { sleep, until } from './wait';

// Three built replicas on one PostgreSQL server under a light, steady load of console messages. The server is
// stopped for 10 s (a planned restart, pg_ctl stop -m fast) and started again: meanwhile each replica says it is
// not ready, refuses what it could not record with 503 STORE_UNAVAILABLE and keeps a bounded number of
// connections and file descriptors; within 30 s of the server's return each one is ready and takes events again.
// Then the server is stopped as a crash would, and SIGTERM still ends a replica.

/** The pool's connections (8) and the one listening connection. */
const MAX_CONNECTIONS_PER_REPLICA = 9;

/** The socket inodes of TCP connections (any state but LISTEN) to `port`, from the kernel's table. */
function connectionsTo(port: number): Set<string> {
  const inodes = new Set<string>();
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text = '';
    try {
      text = readFileSync(table, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      if (f.length < 10) continue;
      const remotePort = parseInt(f[2]!.split(':')[1]!, 16);
      if (remotePort === port && f[3] !== '0A') inodes.add(f[9]!);
    }
  }
  return inodes;
}

/** A process's open file descriptors, and how many of them are connections to `port`. */
function descriptors(pid: number, port: number): { fds: number; connections: number } {
  const toServer = connectionsTo(port);
  let fds = 0;
  let connections = 0;
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    let target: string;
    try {
      target = readlinkSync(`/proc/${pid}/fd/${fd}`);
    } catch {
      continue; // Closed meanwhile.
    }
    fds++;
    const inode = /^socket:\[(\d+)\]$/.exec(target)?.[1];
    if (inode && toServer.has(inode)) connections++;
  }
  return { fds, connections };
}

describe('replicas while their PostgreSQL server is away', () => {
  let set: ReplicaSet;
  let pg: ReplicaSet['pg'];
  let hosts: RunningHost[];

  beforeAll(async () => {
    buildHost();
    set = await startReplicas({ names: ['replica-a', 'replica-b', 'replica-c'], database: 'outage', keyByte: '6b' });
    ({ pg, hosts } = set);
  }, 120_000);

  afterAll(async () => {
    await set?.close();
  });

  it('say they are not ready, refuse what they cannot record, hold a bounded number of connections, and resume within 30 s', async () => {
    for (const h of hosts) {
      expect((await api(h, 'GET', '/api/ready')).body).toEqual({ status: 'ready', store: 'ok' });
      expect((await chat(h, 'before')).status).toBe(200);
    }
    const baseline = hosts.map((h) => descriptors(h.child.pid!, pg.port).fds);

    // A light load: each replica gets a message every 200 ms, the whole time.
    const answers: { at: number; status: number; code?: string }[][] = hosts.map(() => []);
    let loading = true;
    const load = Promise.all(
      hosts.map(async (h, i) => {
        for (let n = 0; loading; n++) {
          const r = await chat(h, `load ${n}`).catch(() => ({ status: 0, body: {} as any }));
          answers[i]!.push({ at: Date.now(), status: r.status, code: r.body?.error?.code });
          await sleep(200);
        }
      }),
    );

    await pg.halt('fast');
    const stoppedAt = Date.now();
    const samples: { fds: number; connections: number }[][] = hosts.map(() => []);
    const readiness: { status: number; code?: string }[][] = hosts.map(() => []);
    const listed: { status: number; code?: string }[][] = hosts.map(() => []);
    while (Date.now() - stoppedAt < 10_000) {
      for (const [i, h] of hosts.entries()) {
        samples[i]!.push(descriptors(h.child.pid!, pg.port));
        const ready = await api(h, 'GET', '/api/ready');
        readiness[i]!.push({ status: ready.status, code: ready.body?.error?.code });
        const plugins = await api(h, 'GET', '/api/plugins');
        listed[i]!.push({ status: plugins.status, code: plugins.body?.error?.code });
      }
      await sleep(250);
    }
    for (const [i, h] of hosts.entries()) {
      // Not ready, for the whole outage, and saying why.
      expect(readiness[i]!.every((r) => r.status === 503 && r.code === 'STORE_UNAVAILABLE')).toBe(true);
      // What needs the database answers 503 with the cause instead of hanging or a generic 500.
      expect(listed[i]!.filter((r) => r.status !== 503 || r.code !== 'STORE_UNAVAILABLE')).toEqual([]);
      // Events it could not record are refused, with the same code; the replica answers through the outage.
      const during = answers[i]!.filter((a) => a.at > stoppedAt + 500 && a.at < stoppedAt + 10_000);
      expect(during.length).toBeGreaterThan(10);
      expect(during.filter((a) => a.status !== 503 || a.code !== 'STORE_UNAVAILABLE')).toEqual([]);
      // Bounded: never more connections than the pool and the listener, nor a growing number of descriptors.
      const most = { connections: Math.max(...samples[i]!.map((s) => s.connections)), fds: Math.max(...samples[i]!.map((s) => s.fds)) };
      expect(most.connections).toBeLessThanOrEqual(MAX_CONNECTIONS_PER_REPLICA);
      expect(most.fds).toBeLessThanOrEqual(baseline[i]! + MAX_CONNECTIONS_PER_REPLICA + 5);
      expect(h.child.exitCode).toBeNull();
    }

    await pg.start();
    const back = Date.now();
    for (const h of hosts) {
      const ready = await until(
        30_000,
        () => api(h, 'GET', '/api/ready'),
        (r) => r.status === 200,
      );
      expect(ready.body).toEqual({ status: 'ready', store: 'ok' });
      const served = await until(
        30_000,
        () => chat(h, 'after'),
        (r) => r.status === 200,
      );
      expect(served.status).toBe(200);
      expect((await api(h, 'GET', '/api/plugins')).status).toBe(200);
    }
    const recovered = Date.now();
    expect(recovered - back).toBeLessThan(30_000);
    await sleep(1000);
    loading = false;
    await load;
    // The load's own messages are taken again too, on every replica, and none is refused any more.
    for (const list of answers) {
      const after = list.filter((a) => a.at > recovered);
      expect(after.length).toBeGreaterThan(0);
      expect(after.filter((a) => a.status !== 200)).toEqual([]);
    }
  }, 120_000);

  it('end on SIGTERM while the server is away', async () => {
    await pg.halt('immediate');
    try {
      await until(
        10_000,
        () => api(hosts[1]!, 'GET', '/api/ready'),
        (r) => r.status === 503,
      );
      const stoppedAt = Date.now();
      const exited = await Promise.race([hosts[1]!.stop('SIGTERM'), sleep(40_000).then(() => 'still running' as const)]);
      expect(exited).not.toBe('still running');
      expect(Date.now() - stoppedAt).toBeLessThan(40_000);
    } finally {
      await pg.start();
    }
  }, 90_000);
});
