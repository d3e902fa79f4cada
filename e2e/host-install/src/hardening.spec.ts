import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { ADMIN_TOKEN, adminTokenFile, api, buildHost, runHostOnce, startHost, type RunningHost } from '@host/e2e-support';

describe('the built host keeps its secrets and limits from plugins', () => {
  let dataDir: string;
  const running: RunningHost[] = [];
  beforeAll(() => buildHost());
  beforeEach(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'host-hardening-'));
  });
  afterEach(async () => {
    for (const h of running.splice(0)) await h.stop('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(`${dataDir}.admin-token`, { force: true });
  });

  describe('the admin token', () => {
    it('is read from a file, so the environment any same-user process can read does not hold it', async () => {
      const host = await startHost(dataDir, { HOST_ADMIN_TOKEN_FILE: adminTokenFile(dataDir) });
      running.push(host);
      expect((await api(host, 'GET', '/api/plugins')).status).toBe(200);
      const environ = `/proc/${host.child.pid}/environ`;
      if (existsSync(environ)) expect(readFileSync(environ, 'latin1')).not.toContain(ADMIN_TOKEN);
      expect(host.output()).not.toContain(ADMIN_TOKEN);
    });

    it('is refused from HOST_ADMIN_TOKEN, with the setting to use instead', () => {
      const r = runHostOnce([], { HOST_DATA_DIR: dataDir, HOST_PORT: '0', HOST_ADMIN_TOKEN: ADMIN_TOKEN });
      expect(r.status).toBe(2);
      expect(r.output).toMatch(/HOST_ADMIN_TOKEN is not accepted: .*HOST_ADMIN_TOKEN_FILE instead/);
      expect(r.output).not.toContain(ADMIN_TOKEN);
      expect(existsSync(join(dataDir, 'state'))).toBe(false);
    });
  });

  describe('the address policy of HTTP plugins', () => {
    // Nothing listens there: only the policy decides whether the host gets as far as connecting.
    const port = 9;
    const loopbackSpellings = [
      `http://2130706433:${port}/`,
      `http://0x7f.1:${port}/`,
      `http://[::ffff:127.0.0.1]:${port}/`,
      `http://127.1:${port}/`,
    ];

    it('refuses loopback in every spelling and private ranges by default on a host bound beyond loopback', async () => {
      const host = await startHost(dataDir, {}, ['--bind', '0.0.0.0']);
      running.push(host);
      for (const baseUrl of [...loopbackSpellings, `http://10.0.0.1:${port}/`, `http://[fd12::1]:${port}/`]) {
        const r = await api(host, 'POST', '/api/plugins/http', { baseUrl });
        expect({ baseUrl, status: r.status, code: r.body.error?.code }).toEqual({
          baseUrl,
          status: 422,
          code: 'REGISTRATION_ADDRESS_REFUSED',
        });
      }
      expect(host.output()).toContain('HTTP plugins on loopback addresses: refused');
    });

    it('refuses private ranges on a loopback host unless HOST_HTTP_ALLOW_PRIVATE is true, and loopback when turned off', async () => {
      const strict = await startHost(dataDir, { HOST_HTTP_ALLOW_LOOPBACK: 'false' });
      running.push(strict);
      expect((await api(strict, 'POST', '/api/plugins/http', { baseUrl: `http://192.168.0.1:${port}/` })).body.error.code).toBe(
        'REGISTRATION_ADDRESS_REFUSED',
      );
      expect((await api(strict, 'POST', '/api/plugins/http', { baseUrl: loopbackSpellings[0] })).body.error.code).toBe(
        'REGISTRATION_ADDRESS_REFUSED',
      );
      await strict.stop();
      const open = await startHost(dataDir, { HOST_HTTP_ALLOW_LOOPBACK: 'true' }, ['--bind', '0.0.0.0']);
      running.push(open);
      const r = await api(open, 'POST', '/api/plugins/http', { baseUrl: loopbackSpellings[1] });
      expect(r.status).not.toBe(201);
      expect(r.body.error.code).not.toBe('REGISTRATION_ADDRESS_REFUSED');
    });
  });

  describe('a manifest refresh of an HTTP plugin', () => {
    let server: Server;
    let manifest: Record<string, unknown>;
    beforeEach(async () => {
      manifest = {
        pluginId: 'com.example.refresh',
        name: 'Refresh',
        version: '1.0.0',
        author: 'Example',
        protocolVersion: 2,
        capabilities: 9,
        eventSubscriptions: [{ eventType: 'message.created' }],
        permissions: ['messages.reply'],
      };
      server = createServer((req, res) => {
        const body = req.url === '/host/plugin/manifest' ? JSON.stringify(manifest) : '{}';
        res.writeHead(200, { 'content-type': 'application/json' }).end(body);
      });
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    });
    afterEach(() => new Promise((r) => server.close(r)));

    it('stores added capabilities and permissions only after the operator confirms the diff', async () => {
      const host = await startHost(dataDir);
      running.push(host);
      const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      expect((await api(host, 'POST', '/api/plugins/http', { baseUrl })).status).toBe(201);
      manifest = { ...manifest, capabilities: 15, permissions: ['messages.reply', 'messages.send', 'messages.mentionEveryone'] };

      const refreshed = await api(host, 'POST', '/api/plugins/com.example.refresh/refresh');
      expect(refreshed.status).toBe(200);
      expect(refreshed.body).toMatchObject({
        changed: false,
        confirmationRequired: true,
        changes: {
          versionOrder: 'same',
          permissionsAdded: ['messages.send', 'messages.mentionEveryone'],
          capabilitiesAdded: ['SendMessages', 'InterceptMessages'],
        },
      });
      const stored = await api(host, 'GET', '/api/plugins/com.example.refresh');
      expect(JSON.stringify(stored.body)).not.toContain('messages.mentionEveryone');

      const stale = await api(host, 'POST', '/api/plugins/com.example.refresh/refresh/confirm', { sha256: '0'.repeat(64) });
      expect(stale.status).toBe(409);
      const confirmed = await api(host, 'POST', '/api/plugins/com.example.refresh/refresh/confirm', {
        sha256: refreshed.body.incoming.sha256,
      });
      expect(confirmed.status).toBe(200);
      expect(confirmed.body).toMatchObject({ changed: true, plugin: { capabilities: 15 } });
    });
  });
});
