import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ADMIN_TOKEN, adminTokenFile, api, buildHost, runHostOnce, startHost, type RunningHost } from './host-process';

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
      expect(r.output).toMatch(/HOST_ADMIN_TOKEN is not accepted: .*HOST_ADMIN_TOKEN_FILE or --admin-token-file/);
      expect(r.output).not.toContain(ADMIN_TOKEN);
      expect(existsSync(join(dataDir, 'state'))).toBe(false);
    });
  });
});
