import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  api,
  confirmUpdate,
  expectDoctorPasses,
  expectMarkdownReply,
  goPackEnv,
  installAndStart,
  listeningUrl,
  packageForm,
  replaceWithHttp,
  ROOT,
  say,
  startHost,
  type RunningHost,
} from '@host/e2e-support';
import { findGo } from '@host/plugin-sdk-go/toolchain';

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

const goEnv = () => goPackEnv(go);

function run(cmd: string, args: string[], cwd: string): string {
  const r = spawnSync(cmd, args, { cwd, encoding: 'utf8', env: goEnv() });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed (${r.status}):\n${r.stdout}\n${r.stderr}`);
  return `${r.stdout}${r.stderr}`;
}

const artifact = (goos = GOOS, goarch = GOARCH) => join(project, 'artifacts', `${ID}-${goos}-${goarch}.zip`);

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
  expect(run(go, ['test', './...'], project)).toMatch(/^ok\s+example\.com\/goecho/m);
  run(process.execPath, [CLI, 'pack'], project);
  expect(existsSync(artifact())).toBe(true);
});

it('the packed plugin passes host-plugin doctor (the conformance suite)', () => {
  expectDoctorPasses(CLI, artifact(), project);
});

it('installs through the admin API, starts and replies in Markdown mentioning the sender', async () => {
  await installAndStart(host, readFileSync(artifact()), ID);
  expectMarkdownReply(await say(host, '/echo <i>hello</i>'), ID, '<qqbot-at-user id="author-1" /> said: **\\<i\\>hello\\<\\/i\\>**');
});

it('updates to a new version through the confirmation flow', async () => {
  const manifestPath = join(project, 'manifest.json');
  const manifest = JSON.parse(readFileSync(manifestPath, 'utf8'));
  writeFileSync(manifestPath, JSON.stringify({ ...manifest, version: '1.1.0' }, null, 2));
  writeFileSync(join(project, 'main.go'), readFileSync(join(project, 'main.go'), 'utf8').replace('" said: **"', '" says: **"'));
  run(process.execPath, [CLI, 'pack'], project);

  await confirmUpdate(host, readFileSync(artifact()), ID, '1.1.0');
  expectMarkdownReply(await say(host, '/echo again'), ID, '<qqbot-at-user id="author-1" /> says: **again**');
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
  const baseUrl = await listeningUrl(child, 'the HTTP plugin');
  writeFileSync(join(project, 'signing-secret.txt'), `${await replaceWithHttp(host, ID, baseUrl)}\n`);
  expectMarkdownReply(await say(host, '/echo over http'), ID, '<qqbot-at-user id="author-1" /> says: **over http**', false);
});
