import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { api, packageForm, ROOT, startHost, type RunningHost } from '@host/e2e-support';

// What a new Go plugin author does, against the real built host process:
// `host-plugin init --lang go`, the project's own `go test`, `host-plugin pack`
// (the Go packer, for this machine), upload through the admin API, a console
// message answered in Markdown with a real mention; an update confirmed by the
// operator; a package built for another platform refused at install; then the
// same plugin served over HTTP (`--http`) and registered by URL.
const CLI = join(ROOT, 'tools/host-plugin/dist/cli.cjs');
const ID = 'com.example.goecho';
const GOOS = ({ win32: 'windows', darwin: 'darwin' } as Record<string, string>)[process.platform] ?? process.platform;
const GOARCH = ({ x64: 'amd64', ia32: '386' } as Record<string, string>)[process.arch] ?? process.arch;
const children: ChildProcess[] = [];
let work: string;
let project: string;
let host: RunningHost;
let go: string;

const goEnv = () => ({ ...process.env, GOTOOLCHAIN: 'local', GOPROXY: 'off', GOFLAGS: '-mod=mod', HOST_PLUGIN_GO: go });

function run(cmd: string, args: string[], cwd: string): string {
  const r = spawnSync(cmd, args, { cwd, encoding: 'utf8', env: goEnv() });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed (${r.status}):\n${r.stdout}\n${r.stderr}`);
  return `${r.stdout}${r.stderr}`;
}

/** Go 1.23+: on PATH or Debian's /usr/lib/go-1.NN (what .ci/run installs). */
function findGo(): string {
  const candidates = [
    process.env['HOST_PLUGIN_GO'],
    'go',
    ...readdirSync('/usr/lib')
      .filter((d) => /^go-1\.\d+$/.test(d))
      .map((d) => `/usr/lib/${d}/bin/go`),
  ].filter((c): c is string => !!c);
  for (const c of candidates) {
    const m = /go1\.(\d+)/.exec(spawnSync(c, ['version'], { encoding: 'utf8' }).stdout ?? '');
    if (m && Number(m[1]) >= 23) return c;
  }
  throw new Error('Go 1.23+ is needed for this test (bash .ci/run installs golang-1.23-go)');
}

const artifact = (goos = GOOS, goarch = GOARCH) => join(project, 'artifacts', `${ID}-${goos}-${goarch}.zip`);

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
    if (!existsSync(f)) throw new Error(`${f} is missing: run "npx nx run e2e-sdk-go:test", which builds it first`);
  }
  go = findGo();
  mkdirSync(join(ROOT, 'tmp'), { recursive: true });
  work = mkdtempSync(join(ROOT, 'tmp', 'e2e-sdk-go-'));
  project = join(work, 'go-echo');
  host = await startHost(join(work, 'data'));
});

afterAll(async () => {
  for (const child of children) if (child.exitCode === null) child.kill('SIGTERM');
  await host?.stop();
  rmSync(work, { recursive: true, force: true });
});

it('init --lang go gives a project whose tests pass and that packs into a ZIP for this machine', () => {
  expect(
    run(process.execPath, [CLI, 'init', 'go-echo', '--lang', 'go', '--id', ID, '--name', 'Go Echo', '--author', 'Tests'], work),
  ).toMatch(/Created com\.example\.goecho/);
  expect(run(go, ['test', './...'], project)).toMatch(/^ok\s+com\.example\.goecho/m);
  run(process.execPath, [CLI, 'pack'], project);
  expect(existsSync(artifact())).toBe(true);
});

it('the packed plugin passes host-plugin doctor (the conformance suite)', () => {
  const r = spawnSync(process.execPath, [CLI, 'doctor', artifact(), '--json'], { cwd: project, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`doctor failed:\n${r.stdout}\n${r.stderr}`);
  const report = JSON.parse(r.stdout) as { checks: Array<{ id: string; status: string }> };
  expect(report.checks.filter((c) => c.status === 'fail')).toEqual([]);
  // The Go sample replies, so the checks that need a busy handler ran.
  expect(report.checks.filter((c) => c.status === 'pass').map((c) => c.id)).toEqual(
    expect.arrayContaining(['ping.while-busy', 'events.overloaded']),
  );
});

it('installs through the admin API, starts and replies in Markdown mentioning the sender', async () => {
  const installed = await api(host, 'POST', '/api/plugins/packages', packageForm(readFileSync(artifact()), { startAfterInstall: 'true' }));
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
  writeFileSync(join(project, 'main.go'), readFileSync(join(project, 'main.go'), 'utf8').replace('" said: **"', '" says: **"'));
  run(process.execPath, [CLI, 'pack'], project);

  const pending = await api(host, 'POST', '/api/plugins/packages', packageForm(readFileSync(artifact())));
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

it('refuses packages built for other platforms at install', async () => {
  const foreign: [string, string][] = [
    ['windows', 'amd64'],
    ['darwin', 'arm64'],
    ['linux', GOARCH === 'arm64' ? 'amd64' : 'arm64'],
  ].filter(([os, arch]) => os !== GOOS || arch !== GOARCH) as [string, string][];
  for (const [goos, goarch] of foreign) {
    run(process.execPath, [CLI, 'pack', '--goos', goos, '--goarch', goarch], project);
    const r = await api(host, 'POST', '/api/plugins/packages', packageForm(readFileSync(artifact(goos, goarch))));
    expect({ target: `${goos}/${goarch}`, code: r.body.error?.code }).toEqual({
      target: `${goos}/${goarch}`,
      code: 'INSTALL_PLATFORM_UNSUPPORTED',
    });
  }
});

it('serves the same plugin over HTTP, registered by base URL, taking the secret from a file without a restart', async () => {
  const exe = join(project, 'goecho-http');
  run(go, ['build', '-o', exe, '.'], project);
  const child = spawn(exe, ['--http', '127.0.0.1:0', '--secret-file', 'signing-secret.txt'], {
    cwd: project,
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
    child.once('exit', (code) => fail(new Error(`the HTTP plugin exited with ${code}:\n${errors}`)));
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
