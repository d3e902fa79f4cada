// The built host under more events than its plugins handle at once: a burst
// of console messages into a plugin whose handler takes 50 ms ends with every
// one answered, and a plugin that never completes cannot make the backlog grow
// without bound: its waiting events expire, and the host's memory stays flat.
import { ADMIN_TOKEN, api, buildHost, packageForm, startHost, type RunningHost } from '@host/e2e-support';
import { buildZip } from '@host/host-installer/testing';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { Agent, request } from 'undici';
import { FIXTURE_DIR } from './harness';

const BURST = 1000;
const WORKER = 'com.example.backlog-worker';
const STUCK = 'com.example.backlog-stuck';

function fixturePackage(pluginId: string, change: (manifest: Record<string, any>) => void): Buffer {
  const manifest = JSON.parse(readFileSync(join(FIXTURE_DIR, 'manifest.json'), 'utf8')) as Record<string, any>;
  manifest['pluginId'] = pluginId;
  change(manifest);
  return buildZip([
    { name: 'manifest.json', data: JSON.stringify(manifest, null, 2) },
    { name: 'plugin.mjs', data: readFileSync(join(FIXTURE_DIR, 'plugin.mjs')) },
  ]);
}

function rssKb(pid: number): number {
  return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]);
}

let dataDir: string;
let host: RunningHost;
const agent = new Agent({ connections: 128, keepAliveTimeout: 10_000 });

async function say(text: string, user: string, group: string, base = host.url): Promise<{ status: number; body: any }> {
  const res = await request(`${base}/api/console/messages`, {
    method: 'POST',
    dispatcher: agent,
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ conversation: { type: 'group', id: group }, sender: { id: user }, text }),
  });
  return { status: res.statusCode, body: await res.body.json() };
}

beforeAll(async () => {
  buildHost();
  dataDir = mkdtempSync(join(tmpdir(), 'host-backlog-'));
  host = await startHost(dataDir);
  // The protocol's default concurrency: what a plugin that declares none gets.
  const worker = fixturePackage(WORKER, (m) => {
    delete m['concurrency'];
    m['commands'] = [{ name: 'slow', prefixes: ['/'] }];
    m['eventSubscriptions'] = [{ eventType: 'message.created', conversationIds: ['g-burst'] }];
  });
  // Never completes: each event holds its only handler until the 1 s deadline; the others wait at most 1 s.
  const stuck = fixturePackage(STUCK, (m) => {
    m['transport'].stdio.args = ['plugin.mjs', '--host-stdio', 'never-complete'];
    m['commands'] = [{ name: 'hold', prefixes: ['/'] }];
    m['eventSubscriptions'] = [{ eventType: 'message.created', conversationIds: ['g-stuck'] }];
    m['concurrency'] = { maxConcurrentEvents: 1, handlerDeadlineMilliseconds: 1000, maxWaitMilliseconds: 1000 };
  });
  for (const zip of [worker, stuck]) {
    const installed = await api(host, 'POST', '/api/plugins/packages', packageForm(zip, { startAfterInstall: 'true' }));
    expect(installed.status).toBe(201);
  }
}, 120_000);

afterAll(async () => {
  await agent.close();
  await host?.stop();
  rmSync(dataDir, { recursive: true, force: true });
  rmSync(`${dataDir}.admin-token`, { force: true });
});

it(`answers ${BURST} console messages sent at once to a plugin whose handler takes 50 ms`, async () => {
  const answers = await Promise.all(Array.from({ length: BURST }, (_, i) => say(`/slow 50`, `u${i}`, 'g-burst')));
  expect(answers.filter((a) => a.status !== 200).map((a) => a.body)).toEqual([]);
  const states = answers.map((a) => a.body.deliveries.map((d: any) => `${d.pluginId}:${d.state}`).join(','));
  expect(states.filter((s) => s !== `${WORKER}:completed`)).toEqual([]);
  const replies = answers.flatMap((a) => a.body.outbound);
  expect(replies).toHaveLength(BURST);
  expect(new Set(replies.map((o: any) => o.body.msg_id)).size).toBe(BURST);
  for (const o of replies) expect(o.body.markdown?.content ?? o.body.content).toContain('slow 50 ms done');
  const view = await api(host, 'GET', `/api/plugins/${WORKER}`);
  expect(view.body.plugin.queue).toMatchObject({ active: 0, waiting: 0, expired: 0 });
}, 120_000);

it('expires the events a never-completing plugin cannot take, keeping its backlog and the host memory bounded', async () => {
  const send = async (n: number, perSecond: number) => {
    const pending: Promise<{ status: number; body: any }>[] = [];
    for (let i = 0; i < n; i++) {
      pending.push(say(`/hold ${i}`, 'u1', 'g-stuck'));
      if (i % perSecond === perSecond - 1) await new Promise((r) => setTimeout(r, 1000));
    }
    return Promise.all(pending);
  };
  let maxWaiting = 0;
  const watch = setInterval(
    () =>
      void api(host, 'GET', `/api/plugins/${STUCK}`).then((r) => (maxWaiting = Math.max(maxWaiting, r.body.plugin.queue?.waiting ?? 0))),
    250,
  );
  // Warm up, then measure: memory after the first round against after four more.
  await send(200, 100);
  const before = rssKb(host.child.pid!);
  const answers = await send(800, 100);
  const after = rssKb(host.child.pid!);
  clearInterval(watch);
  expect(answers.every((a) => a.status === 200)).toBe(true);
  const states = answers.map((a) => a.body.deliveries[0].state);
  const expired = states.filter((s) => s === 'expired').length;
  // About one event a second gets the handler (and its deadline); every other one expires after its second of waiting.
  expect(expired).toBeGreaterThan(700);
  expect(states.filter((s) => s !== 'expired' && s !== 'failed')).toEqual([]);
  const one = answers.find((a) => a.body.deliveries[0].state === 'expired')!;
  expect(one.body.deliveries[0]).toMatchObject({ accepted: false, error: { code: 'delivery.expired' } });
  const view = await api(host, 'GET', `/api/plugins/${STUCK}`);
  expect(view.body.plugin.queue.expired).toBeGreaterThanOrEqual(expired);
  // At 100 events a second and 1 s of waiting at most, about 100 wait at any time (never the 1000 sent).
  expect(maxWaiting).toBeLessThan(300);
  console.log(`backlog: ${expired} of 800 expired, at most ${maxWaiting} waiting, host RSS ${before} kB -> ${after} kB`);
  expect(after - before).toBeLessThan(64 * 1024);
}, 120_000);

it('holds the events that arrive as the host restarts until its enabled plugins run, instead of answering them with no delivery', async () => {
  await host.stop();
  const port = await freePort();
  const starting = startHost(dataDir, { HOST_PORT: String(port) });
  // Each sender tries until the host listens, so the first ones arrive before its plugins have started.
  const answers = await Promise.all(
    Array.from({ length: 20 }, (_, i) => eager(() => say('/slow 1', `restart-${i}`, 'g-burst', `http://127.0.0.1:${port}`))),
  );
  host = await starting;
  expect(answers.map((a) => a.status)).toEqual(answers.map(() => 200));
  expect(answers.map((a) => a.body.deliveries.map((d: any) => `${d.pluginId}:${d.state}`).join(','))).toEqual(
    answers.map(() => `${WORKER}:completed`),
  );
  expect(answers.every((a) => a.body.outbound.length === 1)).toBe(true);
}, 120_000);

/** Calls `send` until the host accepts the connection (it is starting), then answers what it answered. */
async function eager<T>(send: () => Promise<T>): Promise<T> {
  for (let i = 0; ; i++) {
    try {
      return await send();
    } catch (e) {
      const code = (e as { code?: string }).code;
      if (code !== 'ECONNREFUSED' || i > 20_000) throw e;
      await new Promise((r) => setTimeout(r, 2));
    }
  }
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}
