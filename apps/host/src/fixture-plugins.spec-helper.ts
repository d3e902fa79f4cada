import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { buildZip } from '@host/host-installer/testing';

// The bare fixture plugins of e2e/test-fixtures, as the composed-host tests use them.
const FIXTURES = resolve(__dirname, '../../../e2e/test-fixtures');

/** A ZIP of the bare stdio fixture plugin under `pluginId`. */
export function stdioFixturePackage(pluginId: string): Buffer {
  const manifest = JSON.parse(readFileSync(join(FIXTURES, 'misbehaving-plugin/manifest.json'), 'utf8'));
  manifest.pluginId = pluginId;
  return buildZip([
    { name: 'manifest.json', data: JSON.stringify(manifest) },
    { name: 'plugin.mjs', data: readFileSync(join(FIXTURES, 'misbehaving-plugin/plugin.mjs')) },
  ]);
}

/** Starts the bare HTTP fixture plugin on a free port; it reads its signing secret from `secretFile`. */
export async function startBareHttpPlugin(secretFile: string): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, [join(FIXTURES, 'http-plugin-bare/server.mjs'), '--port', '0', '--secret-file', secretFile], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const line = await new Promise<string>((ok, fail) => {
    createInterface({ input: child.stdout! }).once('line', ok);
    child.once('exit', (code) => fail(new Error(`bare HTTP plugin exited with ${code}`)));
  });
  return { child, url: JSON.parse(line).listening };
}
