// Starts the built host for the soak test, as e2e/host-install does (the
// projects do not import each other).
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';

const ROOT = resolve(__dirname, '../../..');
const HOST_MAIN = join(ROOT, 'dist/apps/host/main.cjs');
const ADMIN_TOKEN = 'soak-admin-token-0123456789';

export interface RunningHost {
  child: ChildProcess;
  url: string;
  output: () => string;
  stop(): Promise<void>;
}

/** Builds the host exactly as `npm start` does (tsup, dist/apps/host/main.cjs). */
export function buildHost(): void {
  const r = spawnSync(process.execPath, [join(ROOT, 'node_modules/tsup/dist/cli-default.js'), '--config', 'apps/host/tsup.config.ts'], {
    cwd: ROOT,
    encoding: 'utf8',
  });
  if (r.status !== 0 || !existsSync(HOST_MAIN)) throw new Error(`host build failed:\n${r.stdout}\n${r.stderr}`);
}

/** Starts the built host on a free port and waits until it listens. */
export async function startHost(dataDir: string): Promise<RunningHost> {
  const child = spawn(process.execPath, [HOST_MAIN], {
    cwd: ROOT,
    env: { PATH: process.env['PATH'] ?? '', HOST_PORT: '0', HOST_DATA_DIR: dataDir, HOST_ADMIN_TOKEN: ADMIN_TOKEN },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const port = await new Promise<number>((ok, fail) => {
    const timer = setTimeout(() => fail(new Error(`host did not start within 15 s:\n${out}`)), 15_000);
    child.stdout!.on('data', () => {
      const m = /listening on http:\/\/[^:]+:(\d+)\//.exec(out);
      if (m) {
        clearTimeout(timer);
        ok(Number(m[1]));
      }
    });
    void exited.then(() => fail(new Error(`host exited before listening:\n${out}`)));
  });
  return {
    child,
    url: `http://127.0.0.1:${port}`,
    output: () => out,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}

export async function api(
  host: RunningHost,
  method: string,
  path: string,
  body?: FormData | object,
): Promise<{ status: number; body: any }> {
  const res = await fetch(`${host.url}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${ADMIN_TOKEN}`,
      ...(body && !(body instanceof FormData) ? { 'content-type': 'application/json' } : {}),
    },
    body: body instanceof FormData ? body : body ? JSON.stringify(body) : undefined,
  });
  return { status: res.status, body: await res.json() };
}

export function packageForm(zip: Buffer, fields: Record<string, string> = {}): FormData {
  const form = new FormData();
  form.append('package', new Blob([zip]), 'plugin.zip');
  for (const [k, v] of Object.entries(fields)) form.append(k, v);
  return form;
}
