import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import express from 'express';
import request from 'supertest';
import { hostPaths } from '@host/host-core';
import { ConsoleProvider, createConsoleRouter } from '@host/host-console';
import { Dispatcher } from '@host/host-dispatch';
import { PluginInstaller } from '@host/host-installer';
import { buildZip } from '@host/host-installer/testing';
import { FilePluginLogStore, StdioPluginRuntime } from '@host/host-runtime';
import { FilePendingUpdateStore, JsonRegistryStore } from '@host/host-store';
import { FIXTURE_DIR, fixtureManifest, TEST_TIMINGS, waitGone } from './harness';

function packageZip(version: string): Buffer {
  const manifest = { ...fixtureManifest('com.example.echo', {}), version };
  return buildZip([
    { name: 'manifest.json', data: JSON.stringify(manifest) },
    { name: 'plugin.mjs', data: readFileSync(join(FIXTURE_DIR, 'plugin.mjs')) },
  ]);
}

// What a new operator does: install a package with the installer and start
// it, talk to it through the console, watch it come back after its process
// is killed, update it while it runs, stop it and find no process left.
it('installs, runs, recovers, updates and stops a plugin from its ZIP', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'install-and-run-'));
  const paths = hostPaths(dataDir);
  const store = await JsonRegistryStore.open(paths.stateDir);
  const logs = new FilePluginLogStore(paths);
  const provider = new ConsoleProvider();
  // The dispatcher asks for endpoints only when an event comes, after the runtime exists.
  const dispatcher: Dispatcher = new Dispatcher({ endpoints: () => runtime.endpoints() });
  dispatcher.providers.register(provider);
  const runtime: StdioPluginRuntime = new StdioPluginRuntime({ paths, records: store, logs, sink: dispatcher.sink, timings: TEST_TIMINGS });
  const installer = new PluginInstaller({
    paths,
    store,
    pendingUpdates: new FilePendingUpdateStore(join(paths.stateDir, 'pending')),
    runtime,
  });
  const app = express();
  app.use('/api', createConsoleRouter({ dispatcher, provider }));
  const say = (text: string) =>
    request(app)
      .post('/api/console/messages')
      .send({ conversation: { type: 'group', id: 'g' }, sender: { id: 'ann' }, text });
  const pids: number[] = [];
  try {
    const installed = await installer.install(packageZip('1.0.0'), { startAfterInstall: true });
    expect(installed.started).toBe(true);
    const first = runtime.status('com.example.echo')!;
    pids.push(first.pid!);

    const reply = await say('/echo <b>hi</b>');
    expect(reply.body.outbound[0].body).toMatchObject({
      msg_type: 2,
      markdown: { content: '<qqbot-at-user id="ann" /> <\u2060b>hi<\u2060/b>' },
    });

    process.kill(first.pid!, 'SIGKILL');
    const deadline = Date.now() + 10_000;
    while (runtime.status('com.example.echo')?.state !== 'running' || runtime.status('com.example.echo')?.pid === first.pid) {
      if (Date.now() > deadline) throw new Error(`did not come back: ${JSON.stringify(runtime.status('com.example.echo'))}`);
      await new Promise((r) => setTimeout(r, 20));
    }
    pids.push(runtime.status('com.example.echo')!.pid!);
    expect(runtime.status('com.example.echo')!.crashCount).toBe(1);

    const pending = await installer
      .install(packageZip('1.1.0'))
      .catch((e: { code: string; details: { pendingUpdate: { id: string } } }) => e);
    expect(pending).toMatchObject({ code: 'UPDATE_CONFIRMATION_REQUIRED' });
    const updated = await installer.confirmUpdate((pending as { details: { pendingUpdate: { id: string } } }).details.pendingUpdate.id);
    expect(updated).toMatchObject({ started: true, record: { manifest: { version: '1.1.0' } } });
    pids.push(runtime.status('com.example.echo')!.pid!);
    expect((await say('/echo again')).body.outbound).toHaveLength(1);

    expect(await runtime.stop('com.example.echo')).toMatchObject({ state: 'stopped' });
    for (const pid of pids) expect(await waitGone(pid)).toBe(true);
  } finally {
    await runtime.dispose();
    await logs.flush();
    await store.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
});
