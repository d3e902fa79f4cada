import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { hostPaths, type PluginRecord } from '@host/host-core';
import { Dispatcher } from '@host/host-dispatch';
import { RpcErrorCode, type MessageEvent } from '@host/protocol';
import { fixtureEvent, installFixturePlugin } from './fixture-records.spec-helper';
import { FilePluginLogStore } from './logs/file-plugin-log-store';
import { StdioPluginRuntime, type StdioRuntimeOptions } from './stdio-runtime';

// Real processes of test-fixtures/helper-plugin.mjs, one mode per plugin, behind the real dispatcher.
const FIXTURE = join(__dirname, '..', 'test-fixtures', 'helper-plugin.mjs');

let dir: string;
let runtime: StdioPluginRuntime;
let logs: FilePluginLogStore;
const records = new Map<string, PluginRecord>();

function install(
  pluginId: string,
  mode: string,
  extra: { permissions?: string[]; handlerDeadlineMilliseconds?: number; withoutHostStdio?: boolean } = {},
): void {
  records.set(pluginId, installFixturePlugin({ dataDir: dir, pluginId, script: FIXTURE, args: [mode], ...extra }));
}

let n = 0;
const event = (): MessageEvent => fixtureEvent(++n);

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'supervisor-'));
  records.clear();
  logs = new FilePluginLogStore(hostPaths(dir));
  runtime = newRuntime();
});

/** A runtime on this test's data directory, as a host process would make it (a second one is the host after a restart). */
function newRuntime(extra: Partial<StdioRuntimeOptions> = {}): StdioPluginRuntime {
  return new StdioPluginRuntime({
    paths: hostPaths(dir),
    records: { get: async (id) => records.get(id) },
    logs,
    sink: { send: () => Promise.reject(new Error('not used')) },
    timings: { pingIntervalMilliseconds: 0, restartBaseDelayMilliseconds: 20, stopGraceMilliseconds: 500, killAfterMilliseconds: 200 },
    ...extra,
  });
}

afterEach(async () => {
  await runtime.dispose();
  // Lines of the stopped plugins may still be on their way to the log files.
  await logs.flush();
  rmSync(dir, { recursive: true, force: true });
});

async function deliverOne(pluginId: string) {
  const dispatcher = new Dispatcher({ endpoints: () => runtime.endpoints(), requestTimeoutMilliseconds: 2000 });
  await runtime.start(pluginId);
  const record = await dispatcher.dispatch(event());
  return { record: (await dispatcher.whenCompleted(record.eventId))!, delivery: record.deliveries[0]! };
}

describe('Supervisor as a dispatch endpoint', () => {
  it('records an ACK and its completion apart', async () => {
    install('com.test.ack', 'ack');
    const { delivery } = await deliverOne('com.test.ack');
    expect(delivery).toMatchObject({ state: 'completed', accepted: true, error: null, completion: { error: null, durationMs: 1 } });
  });

  it('refuses an ACK for another event as delivery.ack.invalid', async () => {
    install('com.test.invalid', 'ack-invalid');
    const { delivery } = await deliverOne('com.test.invalid');
    expect(delivery).toMatchObject({ state: 'failed', error: { code: 'delivery.ack.invalid' } });
    expect(delivery.error!.message).toContain('"someone-else"');
  });

  it('reports a JSON-RPC error answer as delivery.plugin_error', async () => {
    install('com.test.overloaded', `rpc-error=${RpcErrorCode.Overloaded}`);
    const { delivery } = await deliverOne('com.test.overloaded');
    expect(delivery.error).toMatchObject({ code: 'delivery.plugin_error' });
    expect(delivery.error!.message).toContain(String(RpcErrorCode.Overloaded));
  });

  it('does not mistake a live plugin answering -32099 for a lost connection', async () => {
    // -32099..-32096 are what vscode-jsonrpc uses locally when a connection goes; a plugin may still send them.
    install('com.test.odd-code', 'rpc-error=-32099');
    const { delivery } = await deliverOne('com.test.odd-code');
    expect(delivery.error).toMatchObject({ code: 'delivery.plugin_error' });
  });

  it('records delivery.interrupted when the plugin exits after accepting, and restarts it', async () => {
    install('com.test.crash', 'exit-after-ack');
    const { delivery } = await deliverOne('com.test.crash');
    expect(delivery).toMatchObject({
      state: 'failed',
      accepted: true,
      error: null,
      completion: { error: { code: 'delivery.interrupted' } },
    });
    // The supervisor learns of the exit once the process and its pipes are gone.
    for (let i = 0; i < 50 && runtime.status('com.test.crash')!.crashCount === 0; i++) await new Promise((r) => setTimeout(r, 10));
    expect(runtime.status('com.test.crash')).toMatchObject({
      crashCount: 1,
      state: expect.stringMatching(/restartPending|starting|running/),
    });
  });

  it('ignores intercepted: true without messages.intercept and notes why', async () => {
    install('com.test.rogue', 'intercept');
    const { record, delivery } = await deliverOne('com.test.rogue');
    expect(record.interceptedBy).toBeNull();
    expect(delivery).toMatchObject({ accepted: true, intercepted: false, notice: { code: 'delivery.intercept.undeclared' } });
  });

  it('honours intercepted: true with messages.intercept', async () => {
    install('com.test.guard', 'intercept', { permissions: ['messages.intercept'] });
    const { record } = await deliverOne('com.test.guard');
    expect(record.interceptedBy).toBe('com.test.guard');
  });

  it('cancels a handler past its deadline at the plugin', async () => {
    install('com.test.slow', 'cancel-log', { handlerDeadlineMilliseconds: 1000 });
    const { record, delivery } = await deliverOne('com.test.slow');
    expect(delivery).toMatchObject({ state: 'failed', completion: { error: { code: 'delivery.deadline' } } });
    let lines: string[] = [];
    for (let i = 0; i < 50 && !lines.some((l) => l.startsWith('cancel')); i++) {
      await new Promise((r) => setTimeout(r, 20));
      lines = (await logs.tail('com.test.slow', 20)).map((l) => l.message);
    }
    expect(lines).toContain(`cancel ${record.eventId} deadline`);
  });
});

describe('Supervisor start failures', () => {
  it('keeps the first error line of a crash with a long stack in the error and the state reason', async () => {
    install('com.test.stack', 'crash-stack');
    const failure = await runtime.start('com.test.stack').then(
      () => null,
      (e: Error & { code?: string }) => e,
    );
    expect(failure).toMatchObject({ code: 'PLUGIN_START_FAILED' });
    const first = "Error [ERR_MODULE_NOT_FOUND]: Cannot find package '@host/plugin-sdk-v2'";
    expect(failure!.message).toContain(first);
    const status = runtime.status('com.test.stack')!;
    expect(status.state).toBe('failed');
    expect(status.stateReason).toContain(first);
    // Stack frames are in the log, not in the reason.
    expect(status.stateReason).not.toContain('at frame');
  });

  it('still shows a failed plugin as failed, with its reason, after the host restarts', async () => {
    install('com.test.failed', 'crash-stack');
    await runtime.start('com.test.failed').catch(() => undefined);
    const before = runtime.status('com.test.failed')!;
    expect(before.state).toBe('failed');
    // The host stops (its shutdown stops every plugin) and a new host process starts on the same data.
    await runtime.dispose();
    runtime = newRuntime();
    const after = runtime.status('com.test.failed');
    expect(after?.state).toBe('failed');
    expect(after?.stateReason).toContain(before.stateReason!);
    expect(after?.stateReason).toMatch(/before the host restarted/);
    // An operator's stop clears it; so would a new start.
    await runtime.stop('com.test.failed');
    await runtime.dispose();
    runtime = newRuntime();
    expect(runtime.status('com.test.failed')).toBeUndefined();
  });

  it('hands changed settings to a running plugin that takes them, and says a restart is needed for one that does not', async () => {
    let settings: Record<string, unknown> = { mode: 'slow' };
    await runtime.dispose();
    runtime = newRuntime({ settings: async () => settings });
    install('com.test.settings', 'settings');
    install('com.test.old', 'ack');
    expect(await runtime.applySettings('com.test.settings')).toMatchObject({ status: 'nextStart' });
    await runtime.start('com.test.settings');
    await runtime.start('com.test.old');
    settings = { mode: 'fast' };
    expect(await runtime.applySettings('com.test.settings')).toMatchObject({ status: 'live' });
    const old = await runtime.applySettings('com.test.old');
    expect(old.status).toBe('restartRequired');
    expect(old.message).toMatch(/restart/);
    // A refusal is a refusal, in the plugin's words without its stack trace; no restart applies the refused values.
    settings = { mode: 'refuse' };
    const refused = await runtime.applySettings('com.test.settings');
    expect(refused).toMatchObject({ status: 'refused', reason: 'Error: mode "refuse" is not one this plugin knows' });
    expect(refused.message).not.toMatch(/ at |\/api\/|restart/);
    await logs.flush();
    const lines = (await logs.tail('com.test.settings', 50)).map((l) => l.message);
    expect(lines).toContain('settings {"mode":"fast"}');
  });

  it('says that the manifest lacks --host-stdio when an SDK-style plugin prints its help and exits', async () => {
    install('com.test.usage', 'ack', { withoutHostStdio: true });
    const failure = await runtime.start('com.test.usage').then(
      () => null,
      (e: Error) => e,
    );
    expect(failure!.message).toContain('exited with code 2');
    expect(failure!.message).toContain('add "--host-stdio" to transport.stdio.args');
    expect(runtime.status('com.test.usage')!.stateReason).toContain('--host-stdio');
  });
});
