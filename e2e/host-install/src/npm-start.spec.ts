import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { adminTokenFile, ROOT } from '@host/e2e-support';

// `npm start` as a service manager runs it: the manager signals (or kills)
// the process it started, which is npm. The host and its plugins must stop
// with it, not live on as orphans that still answer.

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'npm-start-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

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
