import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import request from 'supertest';
import { LIMITS } from '@host/protocol';
import { createTestHost, processAlive, waitGone, type TestHost } from './harness';

const message = (host: TestHost, text: string) =>
  request(host.app)
    .post('/api/console/messages')
    .send({ conversation: { type: 'group', id: 'g1' }, sender: { id: 'u1' }, text });

/** The pid a fixture logged on a line matching `pattern` (its first group). */
async function pidFromLog(host: TestHost, id: string, pattern: RegExp): Promise<number> {
  let pid = 0;
  await host.waitFor(id, () => {
    void host.logs.tail(id, 20).then((lines) => {
      const m = lines.map((l) => pattern.exec(l.message)).find(Boolean);
      if (m) pid = Number(m[1]);
    });
    return pid > 0;
  });
  return pid;
}

// Crashes, restarts, the crash budget, hangs, pollution while running and the
// stop escalation, each with a real misbehaving process.
describe('a running stdio plugin', () => {
  let host: TestHost;

  afterEach(async () => {
    await host.close();
  });

  it('comes back after its process is killed, with a new pid', async () => {
    host = createTestHost();
    const id = host.install();
    const first = await host.runtime.start(id);
    process.kill(first.pid!, 'SIGKILL');
    const pending = await host.waitFor(id, (s) => s.state === 'restartPending');
    expect(pending.stateReason).toContain('was killed by SIGKILL');
    expect(pending.nextRestartAt).toBeDefined();
    const back = await host.waitFor(id, (s) => s.state === 'running');
    expect(back.pid).not.toBe(first.pid);
    expect(back).toMatchObject({ crashCount: 1, lastExitSignal: 'SIGKILL' });
    expect((await message(host, '/echo again')).body.outbound).toHaveLength(1);
  });

  it('is failed with its reason after the crash budget, until the operator starts it', async () => {
    host = createTestHost({ crashBudget: 3 });
    const id = host.install({ args: ['crash-after=1'] });
    await host.runtime.start(id);
    for (let crash = 1; crash <= 3; crash++) {
      await host.waitFor(id, (s) => s.state === 'running');
      await message(host, '/echo boom');
      await host.waitFor(id, (s) => s.crashCount === crash);
    }
    const failed = await host.waitFor(id, (s) => s.state === 'failed');
    expect(failed.stateReason).toMatch(/exited with code 3 unexpectedly; it crashed 3 times within 10 min, so it is not restarted/);
    expect(failed.nextRestartAt).toBeUndefined();
    const again = await host.runtime.start(id);
    expect(again).toMatchObject({ state: 'running', crashCount: 0 });
  });

  it('grows the restart delay with each crash', async () => {
    host = createTestHost({ restartBaseDelayMilliseconds: 200, restartMaxDelayMilliseconds: 10_000, crashBudget: 5 });
    const id = host.install({ args: ['crash-after=1'] });
    await host.runtime.start(id);
    const delays: number[] = [];
    for (let crash = 1; crash <= 2; crash++) {
      await host.waitFor(id, (s) => s.state === 'running');
      await message(host, '/echo boom');
      const s = await host.waitFor(id, (x) => x.state === 'restartPending' && x.crashCount === crash);
      delays.push(Date.parse(s.nextRestartAt!) - Date.parse(s.lastExitAt!));
    }
    expect(delays[0]).toBeGreaterThanOrEqual(150);
    expect(delays[1]).toBeGreaterThanOrEqual(2 * delays[0]! - 50);
  });

  it('refuses the token of a previous run after a restart', async () => {
    host = createTestHost();
    const tokenFile = join(host.paths.dataDir, 'token.txt');
    const id = host.install({ args: [`--token-file=${tokenFile}`] });
    await host.runtime.start(id);
    expect((await message(host, '/log first run')).body.deliveries[0]).toMatchObject({ state: 'completed', completion: { error: null } });
    const firstToken = readFileSync(tokenFile, 'utf8');
    await host.runtime.restart(id);
    expect(firstToken.length).toBeGreaterThanOrEqual(32);
    expect(readFileSync(tokenFile, 'utf8')).not.toBe(firstToken);
    const res = await message(host, '/oldtoken');
    expect(res.body.deliveries[0].completion.error).toMatchObject({ code: 'rpc.-32002' });
    expect((await message(host, '/log second run')).body.deliveries[0]).toMatchObject({ state: 'completed', completion: { error: null } });
  });

  it('stops a plugin that is still in its handshake', async () => {
    host = createTestHost();
    const id = host.install({ args: ['slow-handshake', '--delay-ms=60000'] });
    const starting = host.runtime.start(id).catch((e: { code: string }) => e);
    await host.waitFor(id, (s) => s.state === 'starting' && s.pid !== undefined);
    const { pid } = host.runtime.status(id)!;
    expect(await host.runtime.stop(id)).toMatchObject({ state: 'stopped' });
    expect(await starting).toMatchObject({ code: 'PLUGIN_STATE_CONFLICT' });
    expect(await waitGone(pid!)).toBe(true);
  });

  it('never restarts after an operator stop', async () => {
    host = createTestHost();
    const id = host.install();
    const { pid } = await host.runtime.start(id);
    await host.runtime.stop(id);
    await new Promise((r) => setTimeout(r, 500));
    expect(host.runtime.status(id)).toMatchObject({ state: 'stopped', crashCount: 0 });
    expect(await waitGone(pid!)).toBe(true);
  });

  it('detects a hung plugin with pings and restarts it', async () => {
    host = createTestHost({ pingIntervalMilliseconds: 100, pingTimeoutMilliseconds: 100 });
    const id = host.install({ args: ['hang'] });
    const { pid } = await host.runtime.start(id);
    const pending = await host.waitFor(id, (s) => s.crashCount === 1);
    expect(pending.lastError).toMatch(/^hung: it did not answer plugin\.ping 2 times in a row/);
    expect(await waitGone(pid!)).toBe(true);
  });

  it('stops a plugin that pollutes stdout while running and names the bytes', async () => {
    host = createTestHost();
    const id = host.install({ args: ['stdout-garbage'] });
    const { pid } = await host.runtime.start(id);
    const res = await message(host, '/echo hi');
    expect(res.body.deliveries[0].error.code).toBe('delivery.failed');
    const s = await host.waitFor(id, (x) => x.crashCount === 1);
    expect(s.lastError).toMatch(
      /^stdout pollution \(PLUGIN_STDOUT_POLLUTION\): while running the plugin wrote "debug: got event [^"]+\\n" to stdout/,
    );
    expect(await waitGone(pid!)).toBe(true);
  });

  it('lets a running handler finish and complete after plugin.stop, then the plugin exits on its own', async () => {
    host = createTestHost();
    const id = host.install();
    await host.runtime.start(id);
    const answer = message(host, '/slow 600').then((r) => r);
    // The delivery is under way once the plugin reports it in flight.
    await host.waitFor(id, () => host.dispatcher.queueStats().some((q) => q.pluginId === id && q.active === 1));
    const stopped = await host.runtime.stop(id);
    expect(stopped).toMatchObject({ state: 'stopped', lastExitCode: 0, lastExitSignal: null });
    const { body } = await answer;
    expect(body.deliveries).toEqual([
      {
        pluginId: id,
        state: 'completed',
        accepted: true,
        intercepted: false,
        error: null,
        completion: expect.objectContaining({ error: null }),
      },
    ]);
    expect(body.outbound).toHaveLength(1);
    const log = (await host.logs.tail(id, 50)).map((l) => l.message);
    expect(log.some((m) => m.includes('sending SIGTERM'))).toBe(false);
  });

  it('escalates to SIGKILL for a plugin that ignores plugin.stop and SIGTERM, children included', async () => {
    host = createTestHost();
    const id = host.install({ args: ['ignore-stop', '--spawn-child'] });
    const { pid } = await host.runtime.start(id);
    const childPid = await pidFromLog(host, id, /^child-pid=(\d+)$/);
    expect(processAlive(childPid)).toBe(true);
    const [a, b] = await Promise.all([host.runtime.stop(id), host.runtime.stop(id)]);
    expect(a).toEqual(b);
    expect(a).toMatchObject({ state: 'stopped', lastExitSignal: 'SIGKILL' });
    expect(await waitGone(pid!)).toBe(true);
    expect(processAlive(childPid)).toBe(false);
    const log = (await host.logs.tail(id, 50)).map((l) => l.message);
    expect(log).toEqual(expect.arrayContaining([expect.stringContaining('sending SIGTERM'), expect.stringContaining('sending SIGKILL')]));
  });

  // Found through the marker in its environment (/proc), which only Linux offers.
  (process.platform === 'linux' ? it : it.skip)("ends a process that left the plugin's process group with setsid", async () => {
    host = createTestHost();
    const id = host.install({ args: ['echo', '--escape-child'] });
    await host.runtime.start(id);
    const escaped = await pidFromLog(host, id, /^escaped-pid=(\d+)$/);
    expect(processAlive(escaped)).toBe(true);
    await host.runtime.stop(id);
    expect(await waitGone(escaped)).toBe(true);
  });

  it('keeps a stderr flood bounded in memory and on disk, with capped lines, and keeps answering', async () => {
    host = createTestHost();
    const id = host.install({ args: ['flood-stderr', '--flood-bytes=6000000'] });
    await host.runtime.start(id);
    await new Promise((r) => setTimeout(r, 800));
    const res = await message(host, '/echo still here');
    expect(res.body.outbound).toHaveLength(1);
    await host.logs.flush();
    const dir = host.paths.logDirOf(id);
    const total = readdirSync(dir).reduce((n, f) => n + statSync(join(dir, f)).size, 0);
    expect(total).toBeLessThanOrEqual(3 * 1024 * 1024 + 64 * 1024);
    const lines = await host.logs.tail(id, 10_000);
    expect(Math.max(...lines.map((l) => l.message.length))).toBeLessThanOrEqual(LIMITS.maxLogLineChars);
    expect(lines.some((l) => l.message.endsWith('[truncated]'))).toBe(true);
  });
});
