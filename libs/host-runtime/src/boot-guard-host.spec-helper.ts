// One boot of a host for the boot-guard test (run through
// tools/scripts/ts-run.mjs): starts the helper plugin as the host starts it,
// prints its status as one JSON line, then either dies with the plugin
// running (`die`: process.exit without stopping anything) or shuts down
// cleanly (`clean`). `operator` starts it as an operator would, then shuts
// down cleanly. `killed` starts a plugin that ignores the end of its stdin,
// prints its status, and waits to be killed outright (SIGKILL).
import { join, resolve } from 'node:path';
import { hostPaths } from '@host/host-core';
import { installFixturePlugin } from './fixture-records.spec-helper';
import { FilePluginLogStore } from './logs/file-plugin-log-store';
import { StdioPluginRuntime } from './stdio-runtime';

const [dataDir, mode, fixtures] = process.argv.slice(2) as [string, 'die' | 'clean' | 'operator' | 'killed', string];
const PLUGIN = 'com.test.boot';

async function main(): Promise<void> {
  const paths = hostPaths(dataDir);
  const record = installFixturePlugin({
    dataDir,
    pluginId: PLUGIN,
    script: join(resolve(fixtures), 'helper-plugin.mjs'),
    args: [mode === 'killed' ? 'ignore-eof' : 'ack'],
  });
  const runtime = new StdioPluginRuntime({
    paths,
    records: { get: async (id) => (id === PLUGIN ? record : undefined) },
    logs: new FilePluginLogStore(paths),
    sink: { send: () => Promise.reject(new Error('not used')) },
    timings: { pingIntervalMilliseconds: 0, stopGraceMilliseconds: 500, killAfterMilliseconds: 200 },
  });
  const status = mode === 'operator' ? await runtime.start(PLUGIN) : await runtime.startOnBoot(PLUGIN);
  process.stdout.write(`${JSON.stringify(status)}\n`);
  if (mode === 'killed') {
    setInterval(() => undefined, 1000);
    return;
  }
  if (mode !== 'die') await runtime.dispose();
  else {
    // Let the guard's record reach the disk, as it would in a host that ran a while.
    await new Promise((r) => setTimeout(r, 200));
  }
  process.exit(mode === 'die' ? 1 : 0);
}

void main();
