import { mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { buildZip } from '@host/host-installer/testing';
import { ADMIN_TOKEN, api, buildHost, packageForm, startHost, type RunningHost } from '@host/e2e-support';

// The built host runs the conformance suite (POST /api/plugins/{id}/doctor) against a plugin whose handlers never
// complete, on which the suite would wait for minutes. The run lives only as long as its request, and a host killed
// outright during a run leaves none of the run's processes behind.
const FIXTURE = resolve(__dirname, '../../test-fixtures/misbehaving-plugin');
const PLUGIN_ID = 'com.example.never-completes';

function neverCompletingPackage(): Buffer {
  const manifest = JSON.parse(readFileSync(join(FIXTURE, 'manifest.json'), 'utf8')) as Record<string, unknown>;
  manifest['pluginId'] = PLUGIN_ID;
  manifest['transport'] = {
    type: 'stdio-jsonrpc',
    stdio: { command: 'node', args: ['plugin.mjs', '--host-stdio', 'never-complete'], workingDirectory: '.' },
  };
  return buildZip([
    { name: 'manifest.json', data: Buffer.from(JSON.stringify(manifest)) },
    { name: 'plugin.mjs', data: readFileSync(join(FIXTURE, 'plugin.mjs')) },
  ]);
}

/** Pids of the processes working in `dir`: the plugin's processes run in its package folder. */
function processesIn(dir: string): number[] {
  const found: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      if (readlinkSync(`/proc/${name}/cwd`) === dir) found.push(Number(name));
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

async function until(check: () => boolean, what: string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Starts a doctor run without waiting for its answer; `abort` disconnects the client. */
function startDoctor(host: RunningHost): { abort: () => void; answer: Promise<number | 'aborted'> } {
  const controller = new AbortController();
  const answer = fetch(`${host.url}/api/plugins/${PLUGIN_ID}/doctor`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    signal: controller.signal,
  }).then(
    (r) => r.status,
    () => 'aborted' as const,
  );
  return { abort: () => controller.abort(), answer };
}

describe('doctor runs of the built host', () => {
  let dataDir: string;
  let packageDir: string;
  const running: RunningHost[] = [];
  beforeAll(() => buildHost());
  beforeEach(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'host-doctor-'));
    packageDir = join(dataDir, 'plugins-v2', PLUGIN_ID);
  });
  afterEach(async () => {
    for (const h of running.splice(0)) await h.stop('SIGKILL');
    for (const pid of processesIn(packageDir)) process.kill(pid, 'SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(`${dataDir}.admin-token`, { force: true });
  });

  async function hostWithPlugin(): Promise<RunningHost> {
    const host = await startHost(dataDir);
    running.push(host);
    const installed = await api(host, 'POST', '/api/plugins/packages', packageForm(neverCompletingPackage()));
    expect(installed.status).toBe(201);
    // Installed, not started: every process working in its folder is the doctor's.
    expect(processesIn(packageDir)).toEqual([]);
    return host;
  }

  it('ends a run whose client disconnects, with its plugin processes, and frees its doctor slot', async () => {
    const host = await hostWithPlugin();
    const run = startDoctor(host);
    await until(() => processesIn(packageDir).length > 0, 'the run to start the plugin');
    // Into a scenario that waits for a completion that never comes.
    await new Promise((r) => setTimeout(r, 3_000));
    run.abort();
    expect(await run.answer).toBe('aborted');
    await until(() => processesIn(packageDir).length === 0, 'the run to end after its client went away');
    // The slot is free: a new run starts at once instead of 409 PLUGIN_STATE_CONFLICT.
    const again = startDoctor(host);
    await until(() => processesIn(packageDir).length > 0, 'the second run to start the plugin');
    again.abort();
    await until(() => processesIn(packageDir).length === 0, 'the second run to end');
  }, 90_000);

  it('leaves no doctor plugin process when the host is SIGKILLed during a run and started again', async () => {
    const host = await hostWithPlugin();
    const run = startDoctor(host);
    await until(() => processesIn(packageDir).length > 0, 'the run to start the plugin');
    await new Promise((r) => setTimeout(r, 2_000));
    await host.stop('SIGKILL');
    expect(await run.answer).toBe('aborted');
    const restarted = await startHost(dataDir);
    running.push(restarted);
    await until(() => processesIn(packageDir).length === 0, 'the run of the killed host to end');
    // And none comes back: nothing runs the suite any more.
    await new Promise((r) => setTimeout(r, 2_000));
    expect(processesIn(packageDir)).toEqual([]);
    expect(readdirSync(join(dataDir, 'state', 'doctor-processes'))).toEqual([]);
  }, 90_000);
});
