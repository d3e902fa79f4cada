// The built host SIGKILLed in the middle of a burst of console messages into a
// plugin whose handler takes 100 ms: after it starts again on the same data
// directory, each event it answered 200 has exactly one final delivery in the
// event log and one reply, and the events it had taken but not answered yet are
// delivered after the restart, once, instead of being lost or left `interrupted`.
import { ADMIN_TOKEN, api, buildHost, packageForm, startHost, type RunningHost } from '@host/e2e-support';
import { buildZip } from '@host/host-installer/testing';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, request } from 'undici';
import { FIXTURE_DIR } from './harness';

const BURST = 400;
const PLUGIN_ID = 'com.example.crash-worker';

let dataDir: string;
let host: RunningHost | undefined;
const agent = new Agent({ connections: 64, keepAliveTimeout: 10_000 });

function workerPackage(): Buffer {
  const manifest = JSON.parse(readFileSync(join(FIXTURE_DIR, 'manifest.json'), 'utf8')) as Record<string, any>;
  manifest['pluginId'] = PLUGIN_ID;
  delete manifest['concurrency'];
  manifest['commands'] = [{ name: 'slow', prefixes: ['/'] }];
  return buildZip([
    { name: 'manifest.json', data: JSON.stringify(manifest, null, 2) },
    { name: 'plugin.mjs', data: readFileSync(join(FIXTURE_DIR, 'plugin.mjs')) },
  ]);
}

async function say(text: string): Promise<{ status: number; body: any } | null> {
  try {
    const res = await request(`${host!.url}/api/console/messages`, {
      method: 'POST',
      dispatcher: agent,
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ conversation: { type: 'group', id: 'g-crash' }, sender: { id: 'u1' }, text }),
    });
    return { status: res.statusCode, body: await res.body.json() };
  } catch {
    return null; // the host was killed before it answered
  }
}

interface Logged {
  eventId: string;
  event: { message: { text?: string; content?: string } };
  deliveries: { pluginId: string; state: string }[];
  outbound: unknown[];
  completedAt: string | null;
}

beforeAll(async () => {
  buildHost();
  dataDir = mkdtempSync(join(tmpdir(), 'host-crash-'));
  host = await startHost(dataDir);
  const installed = await api(host, 'POST', '/api/plugins/packages', packageForm(workerPackage(), { startAfterInstall: 'true' }));
  expect(installed.status).toBe(201);
  // Building and starting the host take a while on a loaded machine.
}, 120_000);

afterAll(async () => {
  await agent.close();
  await host?.stop();
  rmSync(dataDir, { recursive: true, force: true });
  rmSync(`${dataDir}.admin-token`, { force: true });
});

it(`keeps every answered and every taken event of a burst of ${BURST} across a SIGKILL, each delivered once`, async () => {
  const texts = Array.from({ length: BURST }, (_, i) => `/slow 100 crash-${i}`);
  const pending = texts.map((t) => say(t));
  let answered = 0;
  for (const p of pending) void p.then((a) => a?.status === 200 && answered++);
  while (answered < 40) await new Promise((r) => setTimeout(r, 20));
  await host!.stop('SIGKILL');
  const answers = await Promise.all(pending);
  const ok = answers.filter((a): a is { status: number; body: any } => a?.status === 200);
  expect(ok.length).toBeLessThan(BURST);
  for (const a of ok) expect(a.body.outbound).toHaveLength(1);

  host = await startHost(dataDir);
  const ids = new Set(ok.map((a) => a.body.eventId as string));
  const mine = (r: Logged) => JSON.stringify(r.event).includes('crash-');
  let records: Logged[] = [];
  for (let i = 0; i < 300; i++) {
    records = ((await api(host, 'GET', `/api/events?limit=1000`)).body.events as Logged[]).filter(mine);
    if (records.length > 0 && records.every((r) => r.completedAt !== null) && [...ids].every((id) => records.some((r) => r.eventId === id)))
      break;
    await new Promise((r) => setTimeout(r, 200));
  }
  // Every event answered 200 is in the log once, delivered once, completed, with its one reply.
  for (const id of ids) {
    const logged = records.filter((r) => r.eventId === id);
    expect(logged).toHaveLength(1);
    expect(logged[0]!.deliveries.map((d) => `${d.pluginId}:${d.state}`)).toEqual([`${PLUGIN_ID}:completed`]);
    expect(logged[0]!.outbound).toHaveLength(1);
  }
  // Events taken but not answered when the host died were delivered after the restart: none interrupted, none twice.
  expect(records.length).toBeGreaterThan(ids.size);
  expect(records.flatMap((r) => r.deliveries.map((d) => d.state)).filter((s) => s !== 'completed')).toEqual([]);
  expect(records.filter((r) => r.outbound.length !== 1)).toEqual([]);
  console.log(
    `crash: ${ids.size} of ${BURST} answered before the SIGKILL, ${records.length - ids.size} more taken and delivered after the restart`,
  );
}, 180_000);
