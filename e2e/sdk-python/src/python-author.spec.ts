import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  confirmUpdate,
  expectDoctorPasses,
  expectMarkdownReply,
  installAndStart,
  listeningUrl,
  replaceWithHttp,
  ROOT,
  say,
  startHost,
  type RunningHost,
} from '@host/e2e-support';

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
  expect(run('python3', ['-m', 'unittest'], project)).toMatch(/Ran 5 tests[\s\S]*OK/);
  expect(run(process.execPath, [CLI, 'pack'], project)).toMatch(/packed com\.example\.pyecho 1\.0\.0/);
  expect(existsSync(join(project, `artifacts/${ID}.zip`))).toBe(true);
});

it('the packed plugin passes host-plugin doctor (the conformance suite)', () => {
  expectDoctorPasses(CLI, `artifacts/${ID}.zip`, project);
});

it('installs through the admin API, starts and replies in Markdown mentioning the sender', async () => {
  await installAndStart(host, readFileSync(join(project, `artifacts/${ID}.zip`)), ID);
  expectMarkdownReply(await say(host, '/echo <i>hello</i>'), ID, '<qqbot-at-user id="author-1" /> said: **\\<i\\>hello\\<\\/i\\>**');
});

it('updates to a new version through the confirmation flow', async () => {
  const manifestPath = join(project, 'manifest.json');
  const manifest = JSON.parse(readFileSync(manifestPath, 'utf8'));
  writeFileSync(manifestPath, JSON.stringify({ ...manifest, version: '1.1.0' }, null, 2));
  writeFileSync(join(project, 'plugin.py'), readFileSync(join(project, 'plugin.py'), 'utf8').replace('" said: **"', '" says: **"'));
  run(process.execPath, [CLI, 'pack'], project);

  await confirmUpdate(host, readFileSync(join(project, `artifacts/${ID}.zip`)), ID, '1.1.0');
  expectMarkdownReply(await say(host, '/echo again'), ID, '<qqbot-at-user id="author-1" /> says: **again**');
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
  const baseUrl = await listeningUrl(child, 'serve_http.py');
  writeFileSync(join(project, 'signing-secret.txt'), `${await replaceWithHttp(host, ID, baseUrl)}\n`);
  expectMarkdownReply(await say(host, '/echo over http'), ID, '<qqbot-at-user id="author-1" /> says: **over http**', false);
});
