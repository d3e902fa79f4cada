// Soak test: the built host with several stdio and HTTP plugins that fail at
// random (crash, hang, slow, flood, malformed answers) under a steady event
// load. It checks the bookkeeping, never the speed: every event gets exactly
// one final outcome per recipient plugin (no duplicates, none lost), host
// memory stays flat, and no plugin process outlives the host. Beside the
// events, hostile requests run all along (hostile-traffic.ts): JSON depth
// bombs on the admin API and the QQ Bot webhook, and wrong admin tokens at a
// high rate from another address; a stdio plugin answers "fault:deep" with a
// frame nested as deep, the HTTP plugins with such a body, and one more stdio
// plugin floods stderr throughout.
//
// SOAK_SECONDS sets the load duration (default 45 s; `npx nx run e2e-soak:soak`
// runs 600 s). The report is printed at the end.
import { buildZip } from '@host/host-installer/testing';
import { FakeQqPlatform, WebhookSigner } from '@host/host-qqbot/testing';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { api, buildHost, packageForm, startHost, type RunningHost } from '@host/e2e-support';
import { sendHostileTraffic } from './hostile-traffic';

const SECONDS = Number(process.env['SOAK_SECONDS']) || Number(process.env['SOAK_LONG_SECONDS']) || 45;
const EVENTS_PER_SECOND = 6;
const FIXTURE = join(__dirname, '../../test-fixtures/misbehaving-plugin');
const HTTP_FIXTURE = join(__dirname, '../test-fixtures/faulty-http-plugin.mjs');
const FINAL = new Set(['declined', 'completed', 'failed', 'expired', 'interrupted']);

/** Stdio plugins: the misbehaving fixture under its own id, in a mode, answering the fault commands. */
const STDIO_PLUGINS: { id: string; args: string[] }[] = [
  { id: 'com.example.soak-echo', args: [] },
  { id: 'com.example.soak-crashy', args: ['crash-after=15'] },
  { id: 'com.example.soak-stuck', args: ['never-complete'] },
  { id: 'com.example.soak-noisy', args: ['stdout-garbage', '--garbage-at=running'] },
  // A depth bomb from the plugin's side: the host refuses the frame before parsing it and stops the plugin.
  { id: 'com.example.soak-deep', args: ['--deep-frame-on=fault:deep'] },
  // Short stderr lines in a tight loop from start to stop, answering events meanwhile.
  { id: 'com.example.soak-flood', args: ['flood-stderr', '--flood-line-by-line'] },
];
const HTTP_PLUGINS = ['com.example.soak-http-a', 'com.example.soak-http-b'];

/** Event texts: stdio commands of the fixture and fault words of the HTTP fixture. */
const TEXTS = [
  '/echo hello <b>soak</b>',
  '/slow 400',
  '/crash boom',
  '/invalid',
  '/log a line',
  'plain text',
  'fault:slow',
  'fault:hang',
  'fault:malformed',
  'fault:error',
  'fault:flood',
  'fault:drop',
  'fault:deep',
];
/** Wrong admin tokens the guesser sends every 250 ms: 40 a second, against 10 a minute allowed per address. */
const GUESSES_PER_ROUND = 10;
const WRONG_TOKEN_CODES = new Set(['401 SESSION_TOKEN_INVALID', '401 UNAUTHORIZED', '429 AUTH_THROTTLED', '429 SESSION_SIGN_IN_THROTTLED']);
const BOT = { appId: '102030409', secret: 'e2eSecretForQQSoak000' };

function stdioPackage(id: string, args: string[]): Buffer {
  const manifest = JSON.parse(readFileSync(join(FIXTURE, 'manifest.json'), 'utf8')) as Record<string, unknown>;
  Object.assign(manifest, {
    pluginId: id,
    transport: { type: 'stdio-jsonrpc', stdio: { command: 'node', args: ['plugin.mjs', '--host-stdio', ...args], workingDirectory: '.' } },
    concurrency: { maxConcurrentEvents: 8, queueCapacity: 32, overflowPolicy: 'reject', handlerDeadlineMilliseconds: 1000 },
  });
  return buildZip([
    { name: 'manifest.json', data: JSON.stringify(manifest, null, 2) },
    { name: 'plugin.mjs', data: readFileSync(join(FIXTURE, 'plugin.mjs')) },
  ]);
}

function startHttpPlugin(id: string): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, [HTTP_FIXTURE, '--port', '0', '--plugin-id', id], { stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    createInterface({ input: child.stdout! }).once('line', (line) =>
      resolve({ child, url: (JSON.parse(line) as { listening: string }).listening }),
    );
    child.once('exit', (code) => reject(new Error(`HTTP fixture exited with ${code}`)));
  });
}

/** Resident memory of a process in KiB (Linux), or null. */
function rssKiB(pid: number): number | null {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) : null;
  } catch {
    return null;
  }
}

/** Processes whose working directory is inside `dir` (Linux; [] elsewhere). */
function processesIn(dir: string): number[] {
  if (process.platform !== 'linux') return [];
  const out: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      if (readlinkSync(`/proc/${name}/cwd`).startsWith(dir)) out.push(Number(name));
    } catch {
      // gone, or not ours to read
    }
  }
  return out;
}

interface Delivery {
  pluginId: string;
  state: string;
}
interface EventView {
  eventId: string;
  recipients: string[];
  deliveries: Delivery[];
  outbound?: { pluginId: string; kind: string }[];
  completedAt?: string | null;
}

let dataDir: string;
let host: RunningHost | undefined;
let platform: FakeQqPlatform | undefined;
let accountsFile: string;
const httpChildren: ChildProcess[] = [];

beforeAll(async () => {
  buildHost();
  dataDir = mkdtempSync(join(tmpdir(), 'host-soak-'));
  platform = await FakeQqPlatform.start(BOT);
  accountsFile = `${dataDir}.qqbot.json`;
  writeFileSync(
    accountsFile,
    JSON.stringify({ accounts: [{ id: 'main', apiBaseUrl: platform.apiBaseUrl, tokenUrl: platform.tokenUrl, ...BOT }] }),
    { mode: 0o600 },
  );
});

afterAll(async () => {
  await host?.stop();
  await platform?.close();
  if (accountsFile) rmSync(accountsFile, { force: true });
  for (const c of httpChildren) {
    if (c.exitCode === null && c.signalCode === null) {
      c.kill('SIGTERM');
      await new Promise((r) => c.once('exit', r));
    }
  }
  rmSync(dataDir, { recursive: true, force: true });
});

it(`keeps exactly one outcome per event and plugin through ${SECONDS} s of faults`, async () => {
  host = await startHost(dataDir, { HOST_QQBOT_ACCOUNTS_FILE: accountsFile });
  const signer = new WebhookSigner({ ...BOT, webhookUrl: (await api(host, 'GET', '/api/qqbot/accounts')).body.accounts[0].webhookUrl });
  for (const p of STDIO_PLUGINS) {
    const r = await api(host, 'POST', '/api/plugins/packages', packageForm(stdioPackage(p.id, p.args), { startAfterInstall: 'true' }));
    expect([r.status, r.body]).toEqual([201, expect.anything()]);
  }
  for (const id of HTTP_PLUGINS) {
    const plugin = await startHttpPlugin(id);
    httpChildren.push(plugin.child);
    const r = await api(host, 'POST', '/api/plugins/http', { baseUrl: plugin.url, requestTimeoutMilliseconds: 1000 });
    expect([r.status, r.body]).toEqual([201, expect.anything()]);
  }
  const hostPid = host.child.pid!;
  const pluginPids = new Set<number>();
  const notePids = () => processesIn(dataDir).forEach((p) => pluginPids.add(p));
  notePids();
  const rssStart = rssKiB(hostPid);

  // Steady load: a fixed number of events per second, posted without waiting for their answers.
  const sent: string[] = [];
  const views = new Map<string, EventView>();
  const posts: Promise<void>[] = [];
  let postErrors = 0;
  let replies = 0;
  const post = (i: number) => {
    const text = `${TEXTS[i % TEXTS.length]} #${i}`;
    posts.push(
      api(host!, 'POST', '/api/console/messages', { conversation: { type: 'group', id: 'soak' }, sender: { id: 'u1' }, text }).then(
        (r) => {
          if (r.status !== 200 || typeof r.body?.eventId !== 'string') {
            postErrors++;
            return;
          }
          sent.push(r.body.eventId);
        },
        () => void postErrors++,
      ),
    );
  };
  const poll = async () => {
    const r = await api(host!, 'GET', '/api/events?limit=1000');
    for (const e of r.body.events as EventView[]) views.set(e.eventId, e);
  };
  const started = Date.now();
  const hostile = sendHostileTraffic(host, signer, {
    roundMilliseconds: 250,
    guessesPerRound: GUESSES_PER_ROUND,
    stop: () => Date.now() - started >= SECONDS * 1000,
  });
  let i = 0;
  let rssPeak = rssStart ?? 0;
  let lastPoll = started;
  while (Date.now() - started < SECONDS * 1000) {
    const due = Math.floor(((Date.now() - started) / 1000) * EVENTS_PER_SECOND);
    while (i < due) post(i++);
    await new Promise((r) => setTimeout(r, 250));
    if (Date.now() - lastPoll >= 1000) {
      lastPoll = Date.now();
      await poll();
      notePids();
      rssPeak = Math.max(rssPeak, rssKiB(hostPid) ?? 0);
    }
  }
  await Promise.all(posts);
  const refused = await hostile;
  await signer.close();
  // Drain: wait until every event has a final outcome per recipient (handler deadlines and timeouts are 1 s).
  const pending = () => sent.filter((id) => !isFinal(views.get(id)));
  for (let waited = 0; waited < 60_000 && (await poll(), pending().length > 0); waited += 500) await new Promise((r) => setTimeout(r, 500));
  notePids();
  const rssEnd = rssKiB(hostPid);
  const logOf = async (id: string): Promise<string[]> =>
    ((await api(host!, 'GET', `/api/plugins/${id}/logs?tail=5000`)).body.lines as { message: string }[]).map((l) => l.message);
  const deepLog = await logOf('com.example.soak-deep');
  const floodLog = await logOf('com.example.soak-flood');

  let duplicates = 0;
  let lost = 0;
  let outcomes = 0;
  for (const id of sent) {
    const v = views.get(id);
    if (!v) {
      lost++;
      continue;
    }
    const seen = new Map<string, number>();
    for (const d of v.deliveries) seen.set(d.pluginId, (seen.get(d.pluginId) ?? 0) + 1);
    for (const [, n] of seen) if (n > 1) duplicates += n - 1;
    for (const r of v.recipients) {
      const d = v.deliveries.filter((x) => x.pluginId === r);
      if (d.length === 1 && FINAL.has(d[0]!.state)) outcomes++;
      else if (d.length === 0 || !FINAL.has(d[0]!.state)) lost++;
    }
    const perPlugin = new Map<string, number>();
    for (const o of v.outbound ?? []) if (o.kind === 'reply') perPlugin.set(o.pluginId, (perPlugin.get(o.pluginId) ?? 0) + 1);
    for (const [, n] of perPlugin) {
      replies += n;
      if (n > 1) duplicates += n - 1;
    }
  }
  if (new Set(sent).size !== sent.length) duplicates += sent.length - new Set(sent).size;

  await host.stop();
  await new Promise((r) => setTimeout(r, 500));
  const leftover = [...pluginPids].filter((pid) => {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  });

  const report = {
    seconds: SECONDS,
    eventsPosted: i,
    eventsIn: sent.length,
    postErrors,
    outcomesRecorded: outcomes,
    repliesSent: replies,
    duplicates,
    lostOutcomes: lost,
    hostRssKiB: { start: rssStart, peak: rssPeak, end: rssEnd },
    pluginProcessesSeen: pluginPids.size,
    leftoverProcesses: leftover.length,
    hostileRequests: refused,
  };
  console.log(`soak report\n${JSON.stringify(report, null, 2)}`);

  expect(postErrors).toBe(0);
  expect(duplicates).toBe(0);
  expect(lost).toBe(0);
  expect(outcomes).toBeGreaterThan(0);
  expect(leftover).toEqual([]);
  // The plugin's depth bomb was refused as a frame (the plugin stopped for it), and the flooder runs at the lowest priority.
  expect(deepLog.some((m) => /framing\.json\.too_complex: .*nest deeper than \d+ levels/.test(m))).toBe(true);
  expect(floodLog.some((m) => m.startsWith('stderr flood: '))).toBe(true);
  // Every hostile request was answered with its refusal, none with a server error.
  expect(refused.unanswered).toBe(0);
  const answers = Object.entries(refused.answers);
  const kinds = (what: string) => answers.filter(([k]) => k.startsWith(`${what} `));
  expect(kinds('deep console message').map(([k]) => k)).toEqual(['deep console message 400 REQUEST_JSON_TOO_COMPLEX']);
  expect(kinds('deep HTTP registration').map(([k]) => k)).toEqual(['deep HTTP registration 400 REQUEST_JSON_TOO_COMPLEX']);
  expect(kinds('deep webhook').map(([k]) => k)).toEqual(['deep webhook 400 QQBOT_PAYLOAD_TOO_COMPLEX']);
  const guesses = [...kinds('wrong bearer token'), ...kinds('wrong sign-in token')];
  for (const [k] of guesses) expect(WRONG_TOKEN_CODES).toContain(k.replace(/^wrong (bearer|sign-in) token /, ''));
  // The guesser's address is throttled after 10 wrong tokens a minute; the operator's requests (postErrors) never are.
  const checked = guesses.filter(([k]) => k.includes(' 401 ')).reduce((n, [, c]) => n + c, 0);
  expect(checked).toBeLessThanOrEqual(10 * (Math.ceil(SECONDS / 60) + 1));
  expect(guesses.filter(([k]) => k.includes(' 429 ')).reduce((n, [, c]) => n + c, 0)).toBeGreaterThan(0);
  // Flat memory, with a generous bound: warm-up (JIT, caches, the event log filling) is allowed, growth with time is not.
  if (rssStart !== null && rssEnd !== null) expect(rssEnd).toBeLessThan(rssStart * 2 + 64 * 1024);
});

function isFinal(v: EventView | undefined): boolean {
  if (!v) return false;
  return v.recipients.every((r) => v.deliveries.some((d) => d.pluginId === r && FINAL.has(d.state)));
}
