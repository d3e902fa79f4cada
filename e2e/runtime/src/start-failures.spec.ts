import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import request from 'supertest';
import { createTestHost, waitGone, type TestHost } from './harness';

// Every way a start can fail, with a real process each time: the start
// rejects with a stable code and a message that says what the plugin did,
// the plugin is `failed` with that reason, and no process is left.
describe('starting a stdio plugin', () => {
  let host: TestHost;

  beforeEach(() => {
    host = createTestHost();
  });

  afterEach(async () => {
    await host.close();
  });

  async function startFailure(args: string[], extra: Parameters<TestHost['install']>[0] = {}) {
    const id = host.install({ args, ...extra });
    const error = await host.runtime.start(id).then(
      () => null,
      (e: { code: string; message: string }) => e,
    );
    return { id, error, status: host.runtime.status(id)! };
  }

  it('reports a crash before the handshake with the exit code and stderr tail', async () => {
    const { error, status } = await startFailure(['crash-on-start']);
    expect(error).toMatchObject({ code: 'PLUGIN_START_FAILED' });
    expect(error!.message).toMatch(
      /exited with code 1 before answering host\.initialize; stderr tail: "fatal: configuration file missing"/,
    );
    expect(status).toMatchObject({ state: 'failed', lastExitCode: 1 });
    expect(status.stateReason).toContain('exited with code 1');
  });

  it('gives up on a handshake that does not come in time, and kills the process', async () => {
    await host.close();
    host = createTestHost({ initializeTimeoutMilliseconds: 1_500 });
    const { error, status } = await startFailure(['slow-handshake', '--delay-ms=60000']);
    expect(error).toMatchObject({ code: 'PLUGIN_START_TIMEOUT' });
    expect(error!.message).toMatch(/did not answer host\.initialize within 1\.5 s; does its manifest pass --host-stdio/);
    expect(status.state).toBe('failed');
    for (const pid of host.pids) expect(await waitGone(pid)).toBe(true);
  });

  it('refuses a plugin that answers with another pluginId', async () => {
    const { id, error } = await startFailure(['wrong-plugin-id']);
    expect(error).toMatchObject({ code: 'PLUGIN_HANDSHAKE_INVALID' });
    expect(error!.message).toContain(`answered pluginId com.example.wrong but the manifest says ${id}`);
  });

  it('catches stdout pollution before the handshake and quotes the bytes', async () => {
    const { error, id } = await startFailure(['stdout-garbage', '--garbage-at=start']);
    expect(error).toMatchObject({ code: 'PLUGIN_STDOUT_POLLUTION' });
    expect(error!.message).toContain('"Starting plugin, please wait...\\n"');
    const log = await host.logs.tail(id, 20);
    expect(log.some((l) => l.message.startsWith('stdout pollution'))).toBe(true);
  });

  it('says when the command is not on PATH', async () => {
    const { error } = await startFailure([], { stdio: { command: 'no-such-interpreter-xyz' } });
    expect(error).toMatchObject({ code: 'PLUGIN_COMMAND_NOT_FOUND' });
    expect(error!.message).toContain('command "no-such-interpreter-xyz" was not found on PATH');
  });

  it('refuses a working directory outside the package', async () => {
    const { error } = await startFailure([], { stdio: { workingDirectory: '../..' } });
    expect(error).toMatchObject({ code: 'PLUGIN_WORKDIR_INVALID' });
    expect(host.pids.size).toBe(0);
  });

  it('runs a relative command from the package directory', async () => {
    const id = host.install({ stdio: { command: './bin/run.sh', args: [] } });
    const script = join(host.paths.packageDir(id), 'bin', 'run.sh');
    mkdirSync(join(host.paths.packageDir(id), 'bin'), { recursive: true });
    writeFileSync(script, '#!/bin/sh\nexec node plugin.mjs --host-stdio "$@"\n');
    chmodSync(script, 0o755);
    const status = await host.runtime.start(id);
    expect(status.state).toBe('running');
  });

  it('gives the plugin the allow-listed environment, never the host secrets', async () => {
    process.env['HOST_ADMIN_TOKEN'] = 'admin-secret-token';
    try {
      const id = host.install({ stdio: { environment: { GREETING: 'hello', HOST_PLUGIN_ID: 'forged' } } });
      await host.runtime.start(id);
      const res = await request(host.app)
        .post('/api/console/messages')
        .send({
          conversation: { type: 'group', id: 'g' },
          sender: { id: 'u' },
          text: '/env HOST_ADMIN_TOKEN GREETING HOST_PLUGIN_ID PATH HOST_PLUGIN_DATA_DIR',
        });
      const content: string = res.body.outbound[0].body.content;
      expect(content).toContain('HOST_ADMIN_TOKEN=-');
      expect(content).toContain('GREETING=hello');
      expect(content).toContain(`HOST_PLUGIN_ID=${id}`);
      expect(content).toContain(`PATH=${process.env['PATH']}`);
      expect(content).toContain(`HOST_PLUGIN_DATA_DIR=${host.paths.dataDirOf(id)}`);
    } finally {
      delete process.env['HOST_ADMIN_TOKEN'];
    }
  });

  it('starts again after a failed start once the operator fixes the cause', async () => {
    const id = host.install({ args: ['crash-on-start'] });
    await expect(host.runtime.start(id)).rejects.toMatchObject({ code: 'PLUGIN_START_FAILED' });
    host.install({ args: [] });
    const status = await host.runtime.start(id);
    expect(status).toMatchObject({ state: 'running', crashCount: 0 });
    expect(status.lastError).toBeUndefined();
  });
});
