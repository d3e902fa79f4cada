import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { testManifest, testPackage } from '@host/host-installer/testing';
import { ADMIN_TOKEN, adminTokenFile, buildHost, ROOT, startHost } from '@host/e2e-support';

// `npm start` as a service manager runs it: the manager signals (or kills)
// the process it started, which is npm. The host and its plugins must stop
// with it, not live on as orphans that still answer.

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'npm-start-'));
});
const afterThis: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanUp of afterThis.splice(0)) await cleanUp();
  rmSync(dir, { recursive: true, force: true });
});

/** Starts `npm start` and resolves with the npm process and the host's URL once it listens. */
async function npmStart(): Promise<{ npm: ChildProcess; url: string; output: () => string }> {
  const npm = spawn('npm', ['start'], {
    cwd: ROOT,
    env: {
      ...process.env,
      HOST_PORT: '0',
      HOST_DATA_DIR: join(dir, 'data'),
      HOST_ADMIN_TOKEN: '',
      HOST_ADMIN_TOKEN_FILE: adminTokenFile(join(dir, 'data')),
      NX_DAEMON: 'false',
      FORCE_COLOR: '0',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  npm.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  npm.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const url = await new Promise<string>((ok, fail) => {
    npm.stdout!.on('data', () => {
      const m = /listening on (http:\/\/\S+?)\/? /.exec(out);
      if (m) ok(m[1]!.replace(/\/$/, ''));
    });
    npm.once('exit', (code) => fail(new Error(`npm start exited (${code}) before the host listened:\n${out}`)));
  });
  return { npm, url, output: () => out };
}

/** True while something answers the health check at `url`. */
async function answers(url: string): Promise<boolean> {
  try {
    return (await fetch(`${url}/api/health`, { signal: AbortSignal.timeout(2000) })).ok;
  } catch {
    return false;
  }
}

/** Polls until the host stops answering; false if it still answers after `tries` seconds. */
async function goneWithin(url: string, tries: number): Promise<boolean> {
  for (let i = 0; i < tries; i++) {
    if (!(await answers(url))) return true;
    await new Promise((r) => setTimeout(r, 1000));
  }
  return false;
}

it.each(['SIGTERM', 'SIGKILL'] as const)(
  '%s to npm stops the host it started',
  async (signal) => {
    const { npm, url, output } = await npmStart();
    expect(await answers(url)).toBe(true);
    process.kill(npm.pid!, signal);
    if (!(await goneWithin(url, 20))) throw new Error(`the host still answers after ${signal} to npm:\n${output()}`);
  },
  240_000,
);

/** Every plugin log line the host kept under `<dataDir>/logs`. */
function pluginLogs(dataDir: string): string {
  const read = (p: string): string =>
    statSync(p).isDirectory()
      ? readdirSync(p)
          .map((f) => read(join(p, f)))
          .join('')
      : readFileSync(p, 'utf8');
  return existsSync(join(dataDir, 'logs')) ? read(join(dataDir, 'logs')) : '';
}

// Ctrl-C in a terminal: the terminal sends SIGINT to its whole foreground process group (npm, the launcher and the
// host), and npm and the launcher pass theirs on as well. That is one request to stop, so the plugins get plugin.stop.
it('Ctrl-C on npm start in a terminal stops the host gracefully: plugin.stop, exit code 0', async () => {
  const dataDir = join(dir, 'data');
  const term = spawn('python3', [join(__dirname, 'pty-run.py'), 'npm', 'start'], {
    cwd: ROOT,
    env: {
      ...process.env,
      HOST_PORT: '0',
      HOST_DATA_DIR: dataDir,
      HOST_ADMIN_TOKEN: '',
      HOST_ADMIN_TOKEN_FILE: adminTokenFile(dataDir),
      NX_DAEMON: 'false',
      FORCE_COLOR: '0',
    },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let out = '';
  term.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  term.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const ended = new Promise<string>((ok) => term.once('exit', () => ok(out)));
  // Whatever fails, the helper ends the terminal's processes when its input closes.
  afterThis.push(async () => {
    term.stdin!.end();
    await ended;
  });
  const url = await new Promise<string>((ok, fail) => {
    term.stdout!.on('data', () => {
      const m = /listening on (http:\/\/\S+?)\/? /.exec(out);
      if (m) ok(m[1]!.replace(/\/$/, ''));
    });
    void ended.then(() => fail(new Error(`npm start ended before the host listened:\n${out}`)));
  });
  // The fixture plugin, with a line on stderr (kept in its log) when plugin.stop arrives.
  // A second reader of stdin joins once the fixture reads it, so no request is read before the fixture listens.
  const indexJs =
    "import('./plugin.mjs').then(() => process.stdin.on('data', (d) => {\n" +
    "  if (d.includes('\"plugin.stop\"')) process.stderr.write('received plugin.stop\\n');\n" +
    '}));\n';
  const zip = testPackage({
    manifest: testManifest({ pluginId: 'com.example.ctrlc' }),
    indexJs,
    extra: [{ name: 'plugin.mjs', data: readFileSync(join(ROOT, 'e2e/test-fixtures/misbehaving-plugin/plugin.mjs')) }],
  });
  const form = new FormData();
  form.append('package', new Blob([new Uint8Array(zip)]), 'plugin.zip');
  form.append('startAfterInstall', 'true');
  const installed = await fetch(`${url}/api/plugins/packages`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    body: form,
  });
  expect(installed.status).toBe(201);
  const shown = await fetch(`${url}/api/plugins/com.example.ctrlc`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
  expect(((await shown.json()) as { plugin: { state: string } }).plugin.state).toBe('running');

  term.stdin!.write('ctrl-c\n');
  const all = await ended;
  expect(all).not.toContain('exiting without waiting');
  // A start shows the host's lines, not the build's or npm's warnings.
  expect(all).not.toMatch(/Successfully ran target|npm warn/);
  expect(all).toMatch(/SIGINT: stopping plugins/);
  expect(all.trim().split('\n').at(-1)?.trim()).toBe('exit 0');
  expect(pluginLogs(dataDir)).toContain('received plugin.stop');
}, 240_000);

// npm keeps the flags before `--` for itself and only warns about them: the launcher stops with the command that works.
it('npm start with host flags before "--" stops at once and names the command that passes them on', () => {
  const r = spawnSync('npm', ['start', '--reset-admin-token', '--data-dir=/nowhere'], {
    cwd: ROOT,
    env: { ...process.env, FORCE_COLOR: '0' },
    encoding: 'utf8',
    timeout: 60_000,
  });
  expect(r.status).toBe(2);
  expect(r.stderr).toContain('npm start -- --data-dir /nowhere --reset-admin-token');
  expect(r.stderr).toContain('HOST_DATA_DIR=/nowhere HOST_RESET_ADMIN_TOKEN=true npm start');
  expect(r.stdout + r.stderr).not.toContain('listening on');
});

it('the first start says how to reset the token through npm, and HOST_RESET_ADMIN_TOKEN=true prints a new one', async () => {
  buildHost();
  const dataDir = join(dir, 'data');
  const tokenOf = (output: string) => /Admin token: (\S+)/.exec(output)?.[1];
  const first = await startHost(dataDir, { HOST_ADMIN_TOKEN_FILE: '' });
  const firstOutput = first.output();
  expect(await first.stop()).toEqual({ code: 0, signal: null });
  expect(tokenOf(firstOutput)).toBeDefined();
  expect(firstOutput).toContain('npm start -- --reset-admin-token');
  expect(firstOutput).toContain('HOST_RESET_ADMIN_TOKEN=true npm start');

  const again = await startHost(dataDir, { HOST_ADMIN_TOKEN_FILE: '' });
  expect(tokenOf(again.output())).toBeUndefined();
  await again.stop();
  const reset = await startHost(dataDir, { HOST_ADMIN_TOKEN_FILE: '', HOST_RESET_ADMIN_TOKEN: 'true' });
  const newToken = tokenOf(reset.output());
  try {
    expect(newToken).toBeDefined();
    expect(newToken).not.toBe(tokenOf(firstOutput));
    const res = await fetch(`${reset.url}/api/plugins`, { headers: { authorization: `Bearer ${newToken}` } });
    expect(res.status).toBe(200);
  } finally {
    await reset.stop();
  }
}, 240_000);
