// Runs e2e/test-fixtures/http-plugin-bare/server.mjs as a real process.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

export const BARE_PLUGIN = join(__dirname, '../../test-fixtures/http-plugin-bare/server.mjs');

export interface BarePlugin {
  url: string;
  port: number;
  /** Gives the plugin its signing secret, as an operator would after registering. */
  configureSecret(secret: string): void;
  /** Stops the process (SIGTERM) and waits for it to exit. */
  stop(): Promise<void>;
  /** Starts it again on the same port. */
  restart(): Promise<void>;
  /** Stops it and removes its temporary folder. */
  dispose(): Promise<void>;
}

function launch(args: string[]): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, [BARE_PLUGIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
  return new Promise((resolve, reject) => {
    const lines = createInterface({ input: child.stdout! });
    lines.once('line', (line) => {
      lines.close();
      resolve({ child, url: (JSON.parse(line) as { listening: string }).listening });
    });
    child.once('exit', (code) => reject(new Error(`bare plugin exited with ${code} before listening: ${stderr}`)));
  });
}

function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

export async function startBarePlugin(...extraArgs: string[]): Promise<BarePlugin> {
  const dir = mkdtempSync(join(tmpdir(), 'bare-plugin-'));
  const secretFile = join(dir, 'secret');
  const first = await launch(['--port', '0', '--secret-file', secretFile, ...extraArgs]);
  const url = first.url;
  let child = first.child;
  const port = Number(new URL(url).port);
  const stop = async () => {
    child.kill('SIGTERM');
    await exited(child);
  };
  return {
    url,
    port,
    configureSecret: (secret) => writeFileSync(secretFile, secret),
    stop,
    async restart() {
      ({ child } = await launch(['--port', String(port), '--secret-file', secretFile, ...extraArgs]));
    },
    async dispose() {
      await stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
