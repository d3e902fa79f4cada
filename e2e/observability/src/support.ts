import { ADMIN_TOKEN, api, ROOT, type RunningHost } from '@host/e2e-support';
import { buildZip } from '@host/host-installer/testing';
import { parseExposition, type Exposition } from '@host/host-metrics/testing';
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

export const FIXTURES = join(ROOT, 'e2e/test-fixtures');

/** The misbehaving fixture as a package of its own: `pluginId`, its manifest changed by `edit`. */
export function fixturePackage(pluginId: string, edit: (manifest: Record<string, any>) => void = () => undefined): Buffer {
  const dir = join(FIXTURES, 'misbehaving-plugin');
  const manifest = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as Record<string, any>;
  manifest['pluginId'] = pluginId;
  edit(manifest);
  return buildZip([
    { name: 'manifest.json', data: JSON.stringify(manifest) },
    { name: 'plugin.mjs', data: readFileSync(join(dir, 'plugin.mjs')) },
  ]);
}

/** The console user and group of every message here: neither may ever appear in a label. */
export const USER = 'metrics-user-7';
export const GROUP = 'metrics-group-7';

/** Sends `text` through the console API (POST /api/console/messages) and answers its status and body. */
export function say(host: RunningHost, text: string, group = GROUP) {
  return api(host, 'POST', '/api/console/messages', { conversation: { type: 'group', id: group }, sender: { id: USER }, text });
}

/** GET `url` (the main listener's /metrics, or the metrics listener's) with the admin token unless told otherwise. */
export async function scrapeText(url: string, token: string | null = ADMIN_TOKEN): Promise<{ status: number; type: string; body: string }> {
  const res = await fetch(url, token === null ? {} : { headers: { authorization: `Bearer ${token}` } });
  return { status: res.status, type: res.headers.get('content-type') ?? '', body: await res.text() };
}

/** The host's exposition at its main listener, parsed by an exposition parser independent of prom-client. */
export async function scrape(host: RunningHost): Promise<Exposition> {
  const r = await scrapeText(`${host.url}/metrics`);
  if (r.status !== 200) throw new Error(`GET /metrics answered ${r.status}: ${r.body}`);
  return parseExposition(r.body);
}

/** Scrapes until `check` holds (10 s), answering that scrape; fails with the last one's reason. */
export async function scrapeUntil(host: RunningHost, what: string, check: (e: Exposition) => boolean): Promise<Exposition> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const e = await scrape(host);
    if (check(e)) return e;
    if (Date.now() > deadline) throw new Error(`metrics never showed ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The bare HTTP fixture plugin (e2e/test-fixtures/http-plugin-bare), with a secret file nobody writes: it refuses every event. */
export function startBareHttpPlugin(secretFile: string): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, [join(FIXTURES, 'http-plugin-bare/server.mjs'), '--port', '0', '--secret-file', secretFile], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return new Promise((resolve, reject) => {
    const lines = createInterface({ input: child.stdout! });
    lines.once('line', (line) => {
      lines.close();
      resolve({ child, url: (JSON.parse(line) as { listening: string }).listening });
    });
    child.once('exit', (code) => reject(new Error(`the bare HTTP plugin exited with ${code} before listening`)));
  });
}
