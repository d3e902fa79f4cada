import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { api, packageForm, ROOT, startHost, type RunningHost } from '@host/e2e-support';

// What a new Python plugin author does, against the real built host process:
// `host-plugin init --lang python`, the project's own unittest, `host-plugin
// pack` (the Python packer), upload through the admin API, a console message
// answered in Markdown with a real mention; an update confirmed by the
// operator; then the same plugin served over HTTP and registered by URL.
const CLI = join(ROOT, 'tools/host-plugin/dist/cli.cjs');
const ID = 'com.example.pyecho';
const children: ChildProcess[] = [];
let work: string;
let project: string;
let host: RunningHost;

function run(cmd: string, args: string[], cwd: string): string {
  const r = spawnSync(cmd, args, { cwd, encoding: 'utf8', env: { ...process.env, PYTHONDONTWRITEBYTECODE: '1' } });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed (${r.status}):\n${r.stdout}\n${r.stderr}`);
  return `${r.stdout}${r.stderr}`;
}

const say = (text: string) =>
  api(host, 'POST', '/api/console/messages', {
    conversation: { type: 'group', id: 'room-1' },
    sender: { id: 'author-1', displayName: 'Ada' },
    text,
  });

async function waitForState(state: string): Promise<void> {
  const deadline = Date.now() + 20_000;
  let seen = '';
  while (Date.now() < deadline) {
    seen = (await api(host, 'GET', `/api/plugins/${ID}`)).body.plugin?.state;
    if (seen === state) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`plugin state is ${seen}, not ${state}:\n${host.output().slice(-3000)}`);
}

beforeAll(async () => {
  for (const f of [CLI, join(ROOT, 'dist/apps/host/main.cjs')]) {
    if (!existsSync(f)) throw new Error(`${f} is missing: run "npx nx run e2e-sdk-python:test", which builds it first`);
  }
  mkdirSync(join(ROOT, 'tmp'), { recursive: true });
  work = mkdtempSync(join(ROOT, 'tmp', 'e2e-sdk-python-'));
  project = join(work, 'py-echo');
  host = await startHost(join(work, 'data'));
});

afterAll(async () => {
  for (const child of children) if (child.exitCode === null) child.kill('SIGTERM');
  await host?.stop();
  rmSync(work, { recursive: true, force: true });
});

it('init --lang python gives a project whose tests pass and that packs into a ZIP', () => {
  expect(
    run(process.execPath, [CLI, 'init', 'py-echo', '--lang', 'python', '--id', ID, '--name', 'Py Echo', '--author', 'Tests'], work),
  ).toMatch(/Created com\.example\.pyecho/);
  expect(run('python3', ['-m', 'unittest'], project)).toMatch(/Ran 3 tests[\s\S]*OK/);
  expect(run(process.execPath, [CLI, 'pack'], project)).toMatch(/packed com\.example\.pyecho 1\.0\.0/);
  expect(existsSync(join(project, `artifacts/${ID}.zip`))).toBe(true);
});

it('installs through the admin API, starts and replies in Markdown mentioning the sender', async () => {
  const installed = await api(
    host,
    'POST',
    '/api/plugins/packages',
    packageForm(readFileSync(join(project, `artifacts/${ID}.zip`)), { startAfterInstall: 'true' }),
  );
  expect(installed.status).toBe(201);
  expect(installed.body.plugin).toMatchObject({ pluginId: ID, state: 'running', transport: 'stdio-jsonrpc' });

  const r = await say('/echo <i>hello</i>');
  expect(r.status).toBe(200);
  expect(r.body.deliveries).toEqual([
    expect.objectContaining({
      pluginId: ID,
      state: 'completed',
      accepted: true,
      error: null,
      completion: expect.objectContaining({ error: null }),
    }),
  ]);
  expect(r.body.outbound).toEqual([
    expect.objectContaining({
      pluginId: ID,
      target: { type: 'group', id: 'room-1' },
      body: expect.objectContaining({
        msg_type: 2,
        markdown: { content: '<qqbot-at-user id="author-1" /> said: **&lt;i&gt;hello&lt;\\/i&gt;**' },
      }),
    }),
  ]);
});

it('updates to a new version through the confirmation flow', async () => {
  const manifestPath = join(project, 'manifest.json');
  const manifest = JSON.parse(readFileSync(manifestPath, 'utf8'));
  writeFileSync(manifestPath, JSON.stringify({ ...manifest, version: '1.1.0' }, null, 2));
  writeFileSync(join(project, 'plugin.py'), readFileSync(join(project, 'plugin.py'), 'utf8').replace('" said: **"', '" says: **"'));
  run(process.execPath, [CLI, 'pack'], project);

  const pending = await api(host, 'POST', '/api/plugins/packages', packageForm(readFileSync(join(project, `artifacts/${ID}.zip`))));
  expect(pending.status).toBe(409);
  expect(pending.body.error.code).toBe('UPDATE_CONFIRMATION_REQUIRED');
  const confirmed = await api(host, 'POST', `/api/plugins/packages/pending/${pending.body.pendingUpdate.id}/confirm`, {});
  expect(confirmed.status).toBe(200);
  expect(confirmed.body.plugin).toMatchObject({ pluginId: ID, version: '1.1.0' });
  if (confirmed.body.plugin.state !== 'running') await api(host, 'POST', `/api/plugins/${ID}/start`);
  await waitForState('running');

  const r = await say('/echo again');
  expect(r.body.outbound).toEqual([
    expect.objectContaining({
      body: expect.objectContaining({ markdown: { content: '<qqbot-at-user id="author-1" /> says: **again**' } }),
    }),
  ]);
});

it('serves the same plugin over HTTP, registered by base URL, taking the secret from a file without a restart', async () => {
  writeFileSync(
    join(project, 'serve_http.py'),
    [
      'from host_sdk_v2.http import make_http_server, secret_from_file',
      'from plugin import plugin',
      '',
      'server, app = make_http_server(plugin, secret_from_file("signing-secret.txt"), port=0)',
      'print(f"listening http://127.0.0.1:{server.server_address[1]}", flush=True)',
      'server.serve_forever()',
      '',
    ].join('\n'),
  );
  const child = spawn('python3', ['serve_http.py'], {
    cwd: project,
    env: { ...process.env, PYTHONDONTWRITEBYTECODE: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let errors = '';
  child.stderr!.on('data', (d: Buffer) => (errors += d.toString()));
  const baseUrl = await new Promise<string>((ok, fail) => {
    createInterface({ input: child.stdout! }).on('line', (line) => {
      const m = /listening (http:\/\/127\.0\.0\.1:\d+)/.exec(line);
      if (m) ok(m[1]!);
    });
    child.once('exit', (code) => fail(new Error(`serve_http.py exited with ${code}:\n${errors}`)));
  });

  expect((await api(host, 'DELETE', `/api/plugins/${ID}`)).status).toBe(200);
  const registered = await api(host, 'POST', '/api/plugins/http', { baseUrl });
  expect(registered.status).toBe(201);
  expect(registered.body.plugin).toMatchObject({ pluginId: ID, transport: 'http' });
  writeFileSync(join(project, 'signing-secret.txt'), `${registered.body.signingSecret}\n`);

  const r = await say('/echo over http');
  expect(r.body.deliveries).toEqual([expect.objectContaining({ pluginId: ID, accepted: true, error: null })]);
  expect(r.body.outbound).toEqual([
    expect.objectContaining({
      pluginId: ID,
      body: expect.objectContaining({ msg_type: 2, markdown: { content: '<qqbot-at-user id="author-1" /> says: **over http**' } }),
    }),
  ]);
});
