// Benchmark (not a test): what the protocol's concurrency defaults give a
// chat bot whose replies wait on the platform. The built host, one QQ Bot
// account, and a fake platform that takes 50 ms per reply call; two copies of
// the echo fixture in the same host and run, each answering one group:
// - "one at a time": concurrency {maxConcurrentEvents: 1, queueCapacity: 64}, the defaults before;
// - "defaults": no concurrency in the manifest, so the protocol's defaults.
// Each event is a signed group @-message until its reply reaches the
// platform; 1 and 32 events in flight, 3 rounds each (median shown).
//
//   npx nx run e2e-qqbot:bench-concurrency   (--latency-ms N to change the platform's 50 ms)
import { api, buildHost, packageForm, startHost, type RunningHost } from '@host/e2e-support';
import { buildZip } from '@host/host-installer/testing';
import { FakeQqPlatform, WebhookSigner } from '@host/host-qqbot/testing';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const BOT = { appId: '102030407', secret: 'benchSecretForQQConc7' };
const HERE = fileURLToPath(new URL('.', import.meta.url));
const FIXTURE = join(HERE, '../../test-fixtures/misbehaving-plugin');
const latencyArg = process.argv.indexOf('--latency-ms');
const LATENCY_MS = latencyArg >= 0 ? Number(process.argv[latencyArg + 1]) : 50;
const ROUNDS = 3;
/** Events per round, by plugin and events in flight: enough for about 5 s of each. */
const EVENTS = { old: { 1: 60, 32: 100 }, defaults: { 1: 60, 32: 1500 } } as const;
const VARIANTS = {
  old: { group: 'GROUP_ONE_AT_A_TIME', label: 'one at a time (1 handler, 64 waiting)' },
  defaults: { group: 'GROUP_DEFAULTS', label: 'protocol defaults' },
} as const;

interface Round {
  eventsPerSecond: number;
  p50: number;
  p99: number;
  failed: number;
}

const waiting = new Map<string, () => void>();

function echoPackage(pluginId: string, group: string, concurrency?: object): Buffer {
  const manifest = JSON.parse(readFileSync(join(FIXTURE, 'manifest.json'), 'utf8')) as Record<string, unknown>;
  manifest['pluginId'] = pluginId;
  manifest['eventSubscriptions'] = [{ eventType: 'message.created', conversationIds: [group] }];
  if (concurrency) manifest['concurrency'] = concurrency;
  else delete manifest['concurrency'];
  return buildZip([
    { name: 'manifest.json', data: JSON.stringify(manifest) },
    { name: 'plugin.mjs', data: readFileSync(join(FIXTURE, 'plugin.mjs')) },
  ]);
}

async function once(signer: WebhookSigner, group: string): Promise<boolean> {
  const payload = signer.groupAtMessage({ groupOpenId: group, memberOpenId: 'BENCH_MEMBER', content: ' /echo bench' });
  const msgId = (payload['d'] as { id: string }).id;
  let timer: NodeJS.Timeout | undefined;
  const replied = new Promise<boolean>((resolve) => {
    waiting.set(msgId, () => resolve(true));
    timer = setTimeout(() => resolve(false), 60_000);
  });
  const answer = await signer.post(payload);
  const taken = answer.status === 200 && (answer.body as { d?: number }).d !== 1;
  const ok = taken && (await replied);
  clearTimeout(timer);
  waiting.delete(msgId);
  return ok;
}

async function load(signer: WebhookSigner, group: string, concurrency: number, total: number): Promise<Round> {
  const latencies: number[] = [];
  let failed = 0;
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next++ < total) {
        const t = performance.now();
        if (await once(signer, group)) latencies.push(performance.now() - t);
        else failed++;
      }
    }),
  );
  const elapsed = performance.now() - started;
  latencies.sort((a, b) => a - b);
  const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? NaN;
  return { eventsPerSecond: (latencies.length / elapsed) * 1000, p50: at(0.5), p99: at(0.99), failed };
}

const median = (rounds: Round[]): Round =>
  [...rounds].sort((a, b) => a.eventsPerSecond - b.eventsPerSecond)[Math.floor(rounds.length / 2)]!;

async function main(): Promise<void> {
  buildHost();
  const platform = await FakeQqPlatform.start({
    ...BOT,
    maxRecorded: 0,
    latencyMilliseconds: LATENCY_MS,
    onMessage: (m) => waiting.get(String(m.body['msg_id']))?.(),
  });
  const dataDir = mkdtempSync(join(tmpdir(), 'host-qq-concurrency-'));
  const accountsFile = `${dataDir}.qqbot.json`;
  writeFileSync(
    accountsFile,
    JSON.stringify({ accounts: [{ id: 'bench', apiBaseUrl: platform.apiBaseUrl, tokenUrl: platform.tokenUrl, ...BOT }] }),
    { mode: 0o600 },
  );
  let host: RunningHost | undefined;
  const signer = new WebhookSigner({ ...BOT, webhookUrl: '' });
  try {
    host = await startHost(dataDir, { HOST_QQBOT_ACCOUNTS_FILE: accountsFile });
    const packages = [
      echoPackage('com.example.qq-one-at-a-time', VARIANTS.old.group, { maxConcurrentEvents: 1, queueCapacity: 64 }),
      echoPackage('com.example.qq-defaults', VARIANTS.defaults.group),
    ];
    for (const zip of packages) {
      const installed = await api(host, 'POST', '/api/plugins/packages', packageForm(zip, { startAfterInstall: 'true' }));
      if (installed.status !== 201) throw new Error(`plugin install failed: ${JSON.stringify(installed.body)}`);
    }
    const client = new WebhookSigner({ ...BOT, webhookUrl: `${host.url}/api/qqbot/webhook/bench` });
    try {
      for (const v of Object.values(VARIANTS)) await load(client, v.group, 4, 40);
      const rows: string[] = [];
      for (const concurrency of [1, 32] as const) {
        for (const [key, v] of Object.entries(VARIANTS) as [keyof typeof VARIANTS, (typeof VARIANTS)[keyof typeof VARIANTS]][]) {
          const rounds: Round[] = [];
          for (let r = 0; r < ROUNDS; r++) rounds.push(await load(client, v.group, concurrency, EVENTS[key][concurrency]));
          const m = median(rounds);
          rows.push(
            `| ${concurrency} | ${v.label} | ${Math.round(m.eventsPerSecond)} | ${m.p50.toFixed(1)} | ${m.p99.toFixed(1)} | ${m.failed} |`,
          );
        }
      }
      console.log(
        `\nOne echo plugin behind a platform that takes ${LATENCY_MS} ms per reply (median of ${ROUNDS} rounds; latency in ms)\n`,
      );
      console.log('| in flight | plugin concurrency | events/s | p50 | p99 | no reply |');
      console.log('|---|---|---|---|---|---|');
      for (const row of rows) console.log(row);
      console.log('\nTarget: the protocol defaults serve at least 300 events/s at 32 in flight.');
    } finally {
      await client.close();
    }
  } finally {
    await signer.close();
    await host?.stop();
    await platform.close();
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(accountsFile, { force: true });
    rmSync(`${dataDir}.admin-token`, { force: true });
  }
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
