import { hostPaths } from '@host/host-core';
import { PluginInstaller } from '@host/host-installer';
import { createUnavailableRuntime, testManifest, testPackage } from '@host/host-installer/testing';
import { FilePluginLogStore } from '@host/host-runtime';
import { FilePendingUpdateStore, FileSettingsStore, JsonRegistryStore } from '@host/host-store';
import { LogLineSchema } from '@host/admin-api';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createApp } from './app';
import { ensureAdminToken } from './auth';
import { FollowableLogStore } from './log-followers';

const ID = 'com.example.echo';
const line = (message: string) => ({ at: new Date().toISOString(), stream: 'stderr' as const, level: 'info' as const, message });

/** Reads `event: line` messages of an SSE response until `count` arrived. */
async function readLines(res: Response, count: number): Promise<string[]> {
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let text = '';
  const messages: string[] = [];
  while (messages.length < count) {
    const { value, done } = await reader.read();
    if (done) break;
    text += decoder.decode(value, { stream: true });
    let end: number;
    while ((end = text.indexOf('\n\n')) >= 0) {
      const block = text.slice(0, end);
      text = text.slice(end + 2);
      const data = /^event: line\ndata: (.*)$/m.exec(block);
      if (data) messages.push(LogLineSchema.parse(JSON.parse(data[1]!)).message);
    }
  }
  await reader.cancel();
  return messages;
}

describe('following plugin logs (GET /api/plugins/{pluginId}/logs/stream)', () => {
  let dataDir: string;
  let server: Server;
  let base: string;
  let token: string;
  let logs: FollowableLogStore;
  let store: JsonRegistryStore;

  beforeEach(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'api-logs-'));
    const paths = hostPaths(dataDir);
    store = await JsonRegistryStore.open(paths.stateDir);
    const runtime = createUnavailableRuntime();
    const installer = new PluginInstaller({
      paths,
      store,
      pendingUpdates: new FilePendingUpdateStore(join(paths.stateDir, 'pending')),
      runtime,
    });
    await installer.init();
    const admin = await ensureAdminToken(store);
    token = admin.generated!;
    logs = new FollowableLogStore(new FilePluginLogStore(paths), 2);
    const app = createApp({ paths, store, settings: new FileSettingsStore(paths), installer, runtime, logs, adminTokenHash: admin.hash });
    server = app.listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const form = new FormData();
    form.append('package', new Blob([new Uint8Array(testPackage({ manifest: testManifest() }))]), 'p.zip');
    const installed = await fetch(`${base}/api/plugins/packages`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}` },
      body: form,
    });
    expect(installed.status).toBe(201);
  });
  afterEach(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
    await store.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const follow = (path = `/api/plugins/${ID}/logs/stream?tail=2`) =>
    fetch(`${base}${path}`, { headers: { authorization: `Bearer ${token}` } });

  it('sends the tail, then each new line as it is written, as text/event-stream', async () => {
    for (const m of ['old 1', 'old 2', 'old 3']) logs.append(ID, line(m));
    await logs.flush();
    const res = await follow();
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const reading = readLines(res, 4);
    await new Promise((r) => setTimeout(r, 100));
    logs.append(ID, line('<script>new 1</script>'));
    logs.append('com.example.other', line('not this plugin'));
    logs.append(ID, line('new 2'));
    expect(await reading).toEqual(['old 2', 'old 3', '<script>new 1</script>', 'new 2']);
  });

  it('answers PLUGIN_NOT_FOUND for an unknown plugin and BAD_REQUEST for a tail out of range', async () => {
    const unknown = await follow('/api/plugins/com.example.none/logs/stream');
    expect(unknown.status).toBe(404);
    expect(((await unknown.json()) as { error: { code: string } }).error.code).toBe('PLUGIN_NOT_FOUND');
    const bad = await follow(`/api/plugins/${ID}/logs/stream?tail=5001`);
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { code: string } }).error.code).toBe('BAD_REQUEST');
  });

  it('keeps a bounded number of followers: one more ends the oldest stream', async () => {
    const first = await follow(`/api/plugins/${ID}/logs/stream?tail=0`);
    const firstBody = first.text();
    await follow(`/api/plugins/${ID}/logs/stream?tail=0`);
    await new Promise((r) => setTimeout(r, 50));
    expect(logs.followerCount).toBe(2);
    await follow(`/api/plugins/${ID}/logs/stream?tail=0`);
    // The first stream is cut (its body ends); two remain.
    await expect(firstBody).rejects.toThrow();
    expect(logs.followerCount).toBe(2);
  });
});
