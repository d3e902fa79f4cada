import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { hostPaths, type PluginRecord } from '@host/host-core';
import { installFixturePlugin } from '../fixture-records.spec-helper';
import { FilePluginLogStore } from '../logs/file-plugin-log-store';
import { StdioPluginRuntime } from '../stdio-runtime';
import { OUTSIDE_PACKAGE_CODE } from './module-containment';

// Real plugin processes whose package sits below a folder with its own
// node_modules (the data directory inside a checkout): the package must not
// load modules from there, only from its own node_modules.
const FIXTURE = join(__dirname, '..', '..', 'test-fixtures', 'helper-plugin.mjs');

let dir: string;
let runtime: StdioPluginRuntime | undefined;
const records = new Map<string, PluginRecord>();

function writeModule(folder: string, name: string): void {
  mkdirSync(join(folder, 'node_modules', name), { recursive: true });
  writeFileSync(join(folder, 'node_modules', name, 'package.json'), JSON.stringify({ name, version: '1.0.0', main: 'index.js' }));
  writeFileSync(join(folder, 'node_modules', name, 'index.js'), `module.exports = ${JSON.stringify(name)};\n`);
}

function start(pluginId: string, module: string, containModules?: boolean) {
  records.set(pluginId, installFixturePlugin({ dataDir: dir, pluginId, script: FIXTURE, args: [`import=${module}`] }));
  const paths = hostPaths(dir);
  runtime = new StdioPluginRuntime({
    paths,
    records: { get: async (id) => records.get(id) },
    logs: new FilePluginLogStore(paths),
    sink: { send: () => Promise.reject(new Error('not used')) },
    timings: { pingIntervalMilliseconds: 0, restartBaseDelayMilliseconds: 60_000 },
    ...(containModules === undefined ? {} : { containModules }),
  });
  return runtime.start(pluginId).then(
    (status) => ({ status, error: null }),
    (error: Error & { code?: string }) => ({ status: null, error }),
  );
}

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'containment-'));
  records.clear();
  // The data directory's own parent folder offers a module, as a checkout's node_modules would.
  writeModule(dir, 'outer-only');
});

afterEach(async () => {
  await runtime?.dispose();
  runtime = undefined;
  rmSync(dir, { recursive: true, force: true });
});

describe('module containment of Node plugins', () => {
  it('refuses a module found only outside the package, naming it and the fix', async () => {
    const { error } = await start('com.test.leaky', 'outer-only');
    expect(error).toMatchObject({ code: 'PLUGIN_START_FAILED' });
    // The stderr tail is quoted in the message.
    const message = error!.message.replace(/\\"/g, '"');
    expect(message).toContain('Error: Cannot load "outer-only" from plugin.mjs');
    expect(message).toContain("outside the plugin's package");
    expect(message).toContain('declare "outer-only" in package.json "dependencies"');
    expect(runtime!.status('com.test.leaky')!.stateReason!.replace(/\\"/g, '"')).toContain('Cannot load "outer-only"');
  });

  it('loads the same module when the package has it in its own node_modules', async () => {
    writeModule(hostPaths(dir).packageDir('com.test.packed'), 'outer-only');
    const { status, error } = await start('com.test.packed', 'outer-only');
    expect(error).toBeNull();
    expect(status!.state).toBe('running');
  });

  it('keeps Node built-ins available', async () => {
    const { status } = await start('com.test.builtin', 'node:path');
    expect(status!.state).toBe('running');
  });

  it('would let the package lean on the outer module without it (the leak it closes)', async () => {
    const { status } = await start('com.test.open', 'outer-only', false);
    expect(status!.state).toBe('running');
  });

  it('names its refusal with a stable error code', () => {
    expect(OUTSIDE_PACKAGE_CODE).toBe('ERR_PLUGIN_MODULE_OUTSIDE_PACKAGE');
  });
});
