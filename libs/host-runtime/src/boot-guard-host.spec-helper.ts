// One boot of a host for the boot-guard test (run through
// tools/scripts/ts-run.mjs): starts the helper plugin as the host starts it,
// prints its status as one JSON line, then either dies with the plugin
// running (`die`: process.exit without stopping anything) or shuts down
// cleanly (`clean`). `operator` starts it as an operator would, then shuts
// down cleanly.
import { copyFileSync, mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { hostPaths, type StdioPluginRecord } from '@host/host-core';
import { parseStdioManifest } from '@host/protocol';
import { FilePluginLogStore } from './logs/file-plugin-log-store';
import { StdioPluginRuntime } from './stdio-runtime';

const [dataDir, mode, fixtures] = process.argv.slice(2) as [string, 'die' | 'clean' | 'operator', string];
const PLUGIN = 'com.test.boot';

async function main(): Promise<void> {
  const paths = hostPaths(dataDir);
  mkdirSync(paths.packageDir(PLUGIN), { recursive: true });
  copyFileSync(join(resolve(fixtures), 'helper-plugin.mjs'), join(paths.packageDir(PLUGIN), 'plugin.mjs'));
  const parsed = parseStdioManifest({
    pluginId: PLUGIN,
    name: PLUGIN,
    version: '1.0.0',
    author: 'Tests',
    protocolVersion: 2,
    sdkVersion: '2.0.0',
    transport: { type: 'stdio-jsonrpc', stdio: { command: process.execPath, args: ['plugin.mjs', '--host-stdio', 'ack'] } },
    eventSubscriptions: [{ eventType: 'message.created' }],
    permissions: [],
  });
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.issues));
  const at = new Date().toISOString();
  const record: StdioPluginRecord = {
    pluginId: PLUGIN,
    transport: 'stdio-jsonrpc',
    manifest: parsed.value,
    packageSha256: '0'.repeat(64),
    installedAt: at,
    updatedAt: at,
    enabled: true,
  };
  const runtime = new StdioPluginRuntime({
    paths,
    records: { get: async (id) => (id === PLUGIN ? record : undefined) },
    logs: new FilePluginLogStore(paths),
    sink: { send: () => Promise.reject(new Error('not used')) },
    timings: { pingIntervalMilliseconds: 0, stopGraceMilliseconds: 500, killAfterMilliseconds: 200 },
  });
  const status = mode === 'operator' ? await runtime.start(PLUGIN) : await runtime.startOnBoot(PLUGIN);
  process.stdout.write(`${JSON.stringify(status)}\n`);
  if (mode !== 'die') await runtime.dispose();
  else {
    // Let the guard's record reach the disk, as it would in a host that ran a while.
    await new Promise((r) => setTimeout(r, 200));
  }
  process.exit(mode === 'die' ? 1 : 0);
}

void main();
