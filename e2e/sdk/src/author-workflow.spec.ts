import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { linkWorkspaceNodeSdk } from '@host/e2e-support';

// What a new Node plugin author does, against the real built host process:
// `host-plugin init`, build, `host-plugin pack`, upload the ZIP through the
// admin API, send a console message and read the Markdown reply; then serve
// the same plugin definition over HTTP and register it by URL.
const ROOT = resolve(__dirname, '../../..');
const HOST_MAIN = join(ROOT, 'dist/apps/host/main.cjs');
const CLI = join(ROOT, 'tools/host-plugin/dist/cli.cjs');
const TSC = require.resolve('typescript/bin/tsc');
const TOKEN = 'e2e-sdk-admin-token-0123456789';

/** Writes TOKEN to a file only this user can read, for HOST_ADMIN_TOKEN_FILE. */
function tokenFile(file: string): string {
  writeFileSync(file, TOKEN, { mode: 0o600 });
  return file;
}
const ID = 'com.example.mine';

const children: ChildProcess[] = [];
let work: string;
let project: string;
let host: { url: string; child: ChildProcess };

function run(cmd: string, args: string[], cwd: string): string {
  const r = spawnSync(cmd, args, { cwd, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`${args.join(' ')} failed (${r.status}):\n${r.stdout}\n${r.stderr}`);
  return r.stdout;
}

/** Spawns a process and resolves with the first stdout line matching `ready`. */
async function startUntil(
  args: string[],
  env: NodeJS.ProcessEnv,
  cwd: string,
  ready: RegExp,
): Promise<{ child: ChildProcess; match: RegExpExecArray }> {
  const child = spawn(process.execPath, args, { cwd, env: { PATH: process.env['PATH'] ?? '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let seen = '';
  child.stderr!.on('data', (d: Buffer) => (seen += d.toString()));
  const match = await new Promise<RegExpExecArray>((ok, fail) => {
    createInterface({ input: child.stdout! }).on('line', (line) => {
      seen += `${line}\n`;
      const m = ready.exec(line);
      if (m) ok(m);
    });
    child.once('exit', (code) => fail(new Error(`${args.join(' ')} exited with ${code} before it was ready:\n${seen}`)));
  });
  return { child, match };
}

async function api(method: string, path: string, body?: object | FormData): Promise<{ status: number; body: any }> {
  const res = await fetch(`${host.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${TOKEN}`, ...(body && !(body instanceof FormData) ? { 'content-type': 'application/json' } : {}) },
    body: body instanceof FormData ? body : body ? JSON.stringify(body) : undefined,
  });
  return { status: res.status, body: await res.json() };
}

const say = (text: string) =>
  api('POST', '/api/console/messages', {
    conversation: { type: 'group', id: 'room-1' },
    sender: { id: 'author-1', displayName: 'Ada' },
    text,
  });

beforeAll(async () => {
  for (const f of [HOST_MAIN, CLI, join(ROOT, 'libs/plugin-sdk/dist/index.cjs')]) {
    if (!existsSync(f)) throw new Error(`${f} is missing: run "npx nx run e2e-sdk:test", which builds it first`);
  }
  mkdirSync(join(ROOT, 'tmp'), { recursive: true });
  // Inside the workspace so the project's dev tools (typescript, @types) resolve upwards.
  work = mkdtempSync(join(ROOT, 'tmp', 'e2e-sdk-'));
  project = join(work, 'mine');
  const { match } = await startUntil(
    [HOST_MAIN],
    { HOST_PORT: '0', HOST_DATA_DIR: join(work, 'data'), HOST_ADMIN_TOKEN_FILE: tokenFile(join(work, 'admin-token')) },
    ROOT,
    /listening on (http:\/\/\S+?)\/? /,
  );
  host = { url: match[1]!.replace(/\/$/, ''), child: children[0]! };
});

afterAll(async () => {
  for (const c of children.reverse()) {
    if (c.exitCode === null && c.signalCode === null) {
      c.kill('SIGTERM');
      await new Promise((r) => c.once('exit', r));
    }
  }
  rmSync(work, { recursive: true, force: true });
});

it('init, build and pack give an installable ZIP', () => {
  expect(run(process.execPath, [CLI, 'init', 'mine', '--id', ID, '--name', 'Mine', '--author', 'Tests'], work)).toMatch(
    /Created com\.example\.mine/,
  );
  // What `npm install` of the SDK dependency leaves in node_modules.
  linkWorkspaceNodeSdk(project);
  run(process.execPath, [TSC, '-p', 'tsconfig.build.json'], project);
  expect(run(process.execPath, [CLI, 'validate'], project)).toMatch(/ok/);
  expect(run(process.execPath, [CLI, 'pack'], project)).toMatch(/sha256 [0-9a-f]{64}/);
  expect(existsSync(join(project, `artifacts/${ID}.zip`))).toBe(true);
});

it('the scaffolded plugin passes host-plugin doctor, the protocol conformance suite', () => {
  const r = spawnSync(process.execPath, [CLI, 'doctor', `artifacts/${ID}.zip`, '--json'], { cwd: project, encoding: 'utf8' });
  const report = JSON.parse(r.stdout) as { passed: boolean; checks: { id: string; status: string; seen: string[] }[] };
  expect(report.checks.filter((c) => c.status === 'fail')).toEqual([]);
  expect(report.passed).toBe(true);
  expect(r.status).toBe(0);
  // A scaffolded command replies, so the suite can hold its handler busy: nothing about message events is skipped.
  // The scaffold answers clicks on its own buttons only, so the suite's click (other data) gets no reply, and the
  // check of replies to the other event types has none to judge.
  const skipped = report.checks.filter((c) => c.status === 'skip');
  expect(skipped.filter((c) => c.id !== 'messages.markdown-c2c' && c.id !== 'events.deliver-replies').map((c) => c.id)).toEqual([]);
  for (const c of skipped.filter((c) => c.id === 'events.deliver-replies'))
    expect(c.seen.join(' ')).toContain('the handlers sent no reply to these events');
}, 120_000);

it('installs through the admin API and replies in Markdown mentioning the sender', async () => {
  const form = new FormData();
  form.append('package', new Blob([readFileSync(join(project, `artifacts/${ID}.zip`))]), `${ID}.zip`);
  form.append('startAfterInstall', 'true');
  const installed = await api('POST', '/api/plugins/packages', form);
  expect(installed.status).toBe(201);
  expect(installed.body.plugin).toMatchObject({ pluginId: ID, state: 'running', transport: 'stdio-jsonrpc' });

  const r = await say('/echo <i>hello</i>');
  expect(r.status).toBe(200);
  // The SDK decided before its handler ran; the console answers once the handler reported its completion.
  expect(r.body.completed).toBe(true);
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
        // The user's text is literal: & < > become entities, other punctuation takes a backslash.
        markdown: { content: '<qqbot-at-user id="author-1" /> said: **\\<i\\>hello\\<\\/i\\>**' },
      }),
    }),
  ]);

  // The operator has the host check it: the suite runs in a worker process beside the running instance.
  expect((await api('GET', `/api/plugins/${ID}/doctor`)).body).toEqual({ report: null });
  const doctor = await api('POST', `/api/plugins/${ID}/doctor`);
  expect(doctor.status).toBe(200);
  expect(doctor.body.report).toMatchObject({ passed: true, plugin: { pluginId: ID }, counts: { failed: 0 } });
  expect((await api('GET', `/api/plugins/${ID}/doctor`)).body).toEqual({ report: doctor.body.report });
  expect((await api('GET', `/api/plugins/${ID}`)).body.plugin.state).toBe('running');

  // The operator stops it: no reply, no process.
  const detail = await api('GET', `/api/plugins/${ID}`);
  expect(detail.body.plugin.runtime).toMatchObject({ state: 'running', pid: expect.any(Number) });
  const pid: number = detail.body.plugin.runtime.pid;
  expect((await api('POST', `/api/plugins/${ID}/stop`)).body.plugin.state).toBe('stopped');
  expect((await say('/echo again')).body.outbound).toEqual([]);
  expect(() => process.kill(pid, 0)).toThrow();
});

it('serves the same plugin over HTTP, registered by base URL', async () => {
  // The author's HTTP entry: the plugin definition they already wrote.
  writeFileSync(
    join(project, 'serve-http.cjs'),
    [
      "const { createServer } = require('node:http');",
      "const { createHttpHandler } = require('@host/plugin-sdk-v2/http');",
      "const plugin = require('./dist/plugin.js').default;",
      'const server = createServer(createHttpHandler(plugin, { secret: process.env.HOST_PLUGIN_SECRET }));',
      "server.listen(Number(process.env.PORT || 0), '127.0.0.1', () => console.log(`listening http://127.0.0.1:${server.address().port}`));",
      '',
    ].join('\n'),
  );
  // Deploy, register (the host shows the signing secret once), redeploy with the secret.
  const first = await startUntil(
    ['serve-http.cjs'],
    { HOST_PLUGIN_SECRET: 'not-yet-known' },
    project,
    /listening (http:\/\/127\.0\.0\.1:(\d+))/,
  );
  const baseUrl = first.match[1]!;
  await api('DELETE', `/api/plugins/${ID}`);
  const registered = await api('POST', '/api/plugins/http', { baseUrl });
  expect(registered.status).toBe(201);
  expect(registered.body.plugin).toMatchObject({ pluginId: ID, transport: 'http' });
  first.child.kill('SIGTERM');
  await new Promise((r) => first.child.once('exit', r));
  await startUntil(['serve-http.cjs'], { HOST_PLUGIN_SECRET: registered.body.signingSecret, PORT: first.match[2]! }, project, /listening/);

  const r = await say('/echo over http');
  expect(r.body.deliveries).toEqual([expect.objectContaining({ pluginId: ID, accepted: true, error: null })]);
  expect(r.body.outbound).toEqual([
    expect.objectContaining({
      pluginId: ID,
      body: expect.objectContaining({ msg_type: 2, markdown: { content: '<qqbot-at-user id="author-1" /> said: **over http**' } }),
    }),
  ]);
});
