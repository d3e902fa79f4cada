import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

export const ROOT = resolve(__dirname, '../../..');
export const HOST_MAIN = join(ROOT, 'dist/apps/host/main.cjs');
export const ADMIN_TOKEN = 'e2e-admin-token-0123456789';

/** Builds the host exactly as `npm start` does (tsup, dist/apps/host/main.cjs). */
export function buildHost(): void {
  const r = spawnSync(process.execPath, [join(ROOT, 'node_modules/tsup/dist/cli-default.js'), '--config', 'apps/host/tsup.config.ts'], {
    cwd: ROOT,
    encoding: 'utf8',
  });
  if (r.status !== 0 || !existsSync(HOST_MAIN)) throw new Error(`host build failed:\n${r.stdout}\n${r.stderr}`);
}

export interface RunningHost {
  child: ChildProcess;
  port: number;
  url: string;
  output: () => string;
  /** Sends a signal and resolves with the exit code or signal. */
  stop(signal?: NodeJS.Signals): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** A file holding ADMIN_TOKEN beside the data directory (mode 600), for HOST_ADMIN_TOKEN_FILE. */
export function adminTokenFile(dataDir: string): string {
  const file = `${dataDir.replace(/[\\/]+$/, '')}.admin-token`;
  writeFileSync(file, `${ADMIN_TOKEN}\n`, { mode: 0o600 });
  return file;
}

/** Starts the built host on a free port and waits until it listens. */
export async function startHost(
  dataDir: string,
  env: Record<string, string> = {},
  args: string[] = [],
  options: { startTimeoutMilliseconds?: number; nodeArgs?: string[] } = {},
): Promise<RunningHost> {
  // Long enough for a loaded machine (a start takes about a second on a quiet one): this detects a host that never
  // starts, it measures nothing.
  const startTimeout = options.startTimeoutMilliseconds ?? 60_000;
  const child = spawn(process.execPath, [...(options.nodeArgs ?? []), HOST_MAIN, ...args], {
    cwd: ROOT,
    env: {
      PATH: process.env['PATH'] ?? '',
      HOST_PORT: '0',
      HOST_DATA_DIR: dataDir,
      HOST_ADMIN_TOKEN_FILE: adminTokenFile(dataDir),
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((r) =>
    child.once('exit', (code, signal) => r({ code, signal })),
  );
  const port = await new Promise<number>((ok, fail) => {
    // A host that did not start is ended before the failure is told, so the caller's clean-up finds no process
    // still writing to its data directory.
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, startTimeout);
    const check = () => {
      const m = /listening on http:\/\/[^:]+:(\d+)\//.exec(out);
      if (m) {
        clearTimeout(timer);
        ok(Number(m[1]));
      }
    };
    child.stdout!.on('data', check);
    void exited.then(() => {
      clearTimeout(timer);
      fail(new Error(timedOut ? `host did not start within ${startTimeout / 1000} s:\n${out}` : `host exited before listening:\n${out}`));
    });
  });
  return {
    child,
    port,
    url: `http://127.0.0.1:${port}`,
    output: () => out,
    stop: async (signal = 'SIGTERM') => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
}

/** Runs the built host to completion (config errors, --help). */
export function runHostOnce(args: string[], env: Record<string, string>): { status: number | null; output: string } {
  const r = spawnSync(process.execPath, [HOST_MAIN, ...args], {
    cwd: ROOT,
    env: { PATH: process.env['PATH'] ?? '', ...env },
    encoding: 'utf8',
    timeout: 15_000,
  });
  return { status: r.status, output: `${r.stdout}${r.stderr}` };
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
  form.append('package', new Blob([new Uint8Array(zip)]), 'plugin.zip');
  for (const [k, v] of Object.entries(fields)) form.append(k, v);
  return form;
}
