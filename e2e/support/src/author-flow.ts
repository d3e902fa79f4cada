import { spawnSync, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { api, packageForm, type RunningHost } from './host-process';

// The steps a plugin author takes against the real host, shared by the SDK
// suites of every language: chat in a console group, install a package and
// see the reply, update through the operator's confirmation, serve the same
// plugin over HTTP, and check it with `host-plugin doctor`.

/** The console user every author suite chats as, and the group it chats in. */
export const AUTHOR = { id: 'author-1', displayName: 'Ada' } as const;
export const ROOM = 'room-1';

/** Sends `text` from AUTHOR in the console group ROOM and answers the console's reply. */
export function say(host: RunningHost, text: string) {
  return api(host, 'POST', '/api/console/messages', { conversation: { type: 'group', id: ROOM }, sender: AUTHOR, text });
}

/** Waits until the plugin is in `state` (20 s), failing with the host's output otherwise. */
export async function waitForState(host: RunningHost, pluginId: string, state: string): Promise<void> {
  const deadline = Date.now() + 20_000;
  let seen = '';
  while (Date.now() < deadline) {
    seen = (await api(host, 'GET', `/api/plugins/${pluginId}`)).body.plugin?.state;
    if (seen === state) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`plugin state is ${seen}, not ${state}:\n${host.output().slice(-3000)}`);
}

/** Uploads a new package with "start after install" and expects it installed and running. */
export async function installAndStart(host: RunningHost, zip: Buffer, pluginId: string): Promise<void> {
  const installed = await api(host, 'POST', '/api/plugins/packages', packageForm(zip, { startAfterInstall: 'true' }));
  expect(installed.status).toBe(201);
  expect(installed.body.plugin).toMatchObject({ pluginId, state: 'running', transport: 'stdio-jsonrpc' });
}

/**
 * Expects a console answer in which `pluginId` took the event and replied in Markdown with `content`; with
 * `completed`, also that it reported the completion (a stdio plugin).
 */
export function expectMarkdownReply(r: Awaited<ReturnType<typeof say>>, pluginId: string, content: string, completed = true): void {
  expect(r.status).toBe(200);
  const finished = completed ? { state: 'completed', completion: expect.objectContaining({ error: null }) } : {};
  expect(r.body.deliveries).toEqual([expect.objectContaining({ pluginId, accepted: true, error: null, ...finished })]);
  expect(r.body.outbound).toEqual([
    expect.objectContaining({
      pluginId,
      target: { type: 'group', id: ROOM },
      body: expect.objectContaining({ msg_type: 2, markdown: { content } }),
    }),
  ]);
}

/** Uploads a newer package of an installed plugin: 409, then the operator confirms; the plugin runs `version`. */
export async function confirmUpdate(host: RunningHost, zip: Buffer, pluginId: string, version: string): Promise<void> {
  const pending = await api(host, 'POST', '/api/plugins/packages', packageForm(zip));
  expect(pending.status).toBe(409);
  expect(pending.body.error.code).toBe('UPDATE_CONFIRMATION_REQUIRED');
  const confirmed = await api(host, 'POST', `/api/plugins/packages/pending/${pending.body.pendingUpdate.id}/confirm`, {});
  expect(confirmed.status).toBe(200);
  expect(confirmed.body.plugin).toMatchObject({ pluginId, version });
  if (confirmed.body.plugin.state !== 'running') await api(host, 'POST', `/api/plugins/${pluginId}/start`);
  await waitForState(host, pluginId, 'running');
}

/** The base URL an HTTP plugin process prints as "listening http://127.0.0.1:PORT"; fails if it exits first. */
export function listeningUrl(child: ChildProcess, name: string): Promise<string> {
  let errors = '';
  child.stderr?.on('data', (d: Buffer) => (errors += d.toString()));
  return new Promise<string>((ok, fail) => {
    createInterface({ input: child.stdout! }).on('line', (line) => {
      const m = /listening (http:\/\/127\.0\.0\.1:\d+)/.exec(line);
      if (m) ok(m[1]!);
    });
    child.once('exit', (code) => fail(new Error(`${name} exited with ${code}:\n${errors}`)));
  });
}

/** Uninstalls the stdio plugin and registers the same plugin served at `baseUrl`; answers its signing secret. */
export async function replaceWithHttp(host: RunningHost, pluginId: string, baseUrl: string): Promise<string> {
  expect((await api(host, 'DELETE', `/api/plugins/${pluginId}`)).status).toBe(200);
  const registered = await api(host, 'POST', '/api/plugins/http', { baseUrl });
  expect(registered.status).toBe(201);
  expect(registered.body.plugin).toMatchObject({ pluginId, transport: 'http' });
  return registered.body.signingSecret as string;
}

/**
 * Runs `host-plugin doctor --json` on a package and expects no failed check, and the checks that need a
 * busy handler to have run (the sample replies, so nothing is skipped for want of a reply).
 */
export function expectDoctorPasses(cli: string, zip: string, cwd: string): void {
  const r = spawnSync(process.execPath, [cli, 'doctor', zip, '--json'], { cwd, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`doctor failed:\n${r.stdout}\n${r.stderr}`);
  const report = JSON.parse(r.stdout) as { checks: Array<{ id: string; status: string }> };
  expect(report.checks.filter((c) => c.status === 'fail')).toEqual([]);
  expect(report.checks.filter((c) => c.status === 'pass').map((c) => c.id)).toEqual(
    expect.arrayContaining(['ping.while-busy', 'events.overloaded']),
  );
}
