// The AppSecret of a QQ Bot account added through the admin API is kept in state/qqbot-accounts.json sealed
// with the host key, with either store; a file an older host wrote with plain secrets is sealed at the next
// start. After each restart the host still answers the platform's callback validation, which it can only do
// with the secret itself.
import { api, buildHost, startHost, type RunningHost } from '@host/e2e-support';
import { keysFromSecret, validationSignature } from '@host/host-qqbot';
import { WebhookSigner } from '@host/host-qqbot/testing';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

jest.setTimeout(120_000);

const BOT = { appId: '102030499', secret: 'sealedSecretForQQBot7' };

beforeAll(() => buildHost());

/** The platform's op 13: the host answers with a signature only the AppSecret's key makes. */
async function validates(host: RunningHost, id: string): Promise<void> {
  const accounts = await api(host, 'GET', '/api/qqbot/accounts');
  const account = accounts.body.accounts.find((a: { id: string }) => a.id === id);
  const signer = new WebhookSigner({ ...BOT, webhookUrl: account.webhookUrl });
  try {
    expect(await signer.validation('Tk4sealed01', '1725442341')).toEqual({
      status: 200,
      body: {
        plain_token: 'Tk4sealed01',
        signature: validationSignature(keysFromSecret(BOT.secret).privateKey, '1725442341', 'Tk4sealed01'),
      },
    });
  } finally {
    await signer.close();
  }
}

describe.each(['file', 'sql'])('HOST_STORE=%s', (store) => {
  let dataDir: string;
  let host: RunningHost | undefined;

  beforeEach(() => (dataDir = mkdtempSync(join(tmpdir(), `host-qq-sealed-${store}-`))));
  afterEach(async () => {
    await host?.stop();
    host = undefined;
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(`${dataDir}.admin-token`, { force: true });
  });

  it('keeps an account added through the admin API with its AppSecret sealed, and signs with it after a restart', async () => {
    host = await startHost(dataDir, { HOST_STORE: store });
    const added = await api(host, 'POST', '/api/qqbot/accounts', { id: 'main', ...BOT });
    expect(added.status).toBe(201);
    const file = join(dataDir, 'state/qqbot-accounts.json');
    const text = readFileSync(file, 'utf8');
    expect(text).not.toContain(BOT.secret);
    expect(JSON.parse(text).accounts).toEqual([expect.objectContaining({ id: 'main', secret: expect.stringMatching(/^sealed:v1:/) })]);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(join(dataDir, 'state/host.key')).mode & 0o777).toBe(0o600);
    await host.stop();
    host = await startHost(dataDir, { HOST_STORE: store });
    await validates(host, 'main');
  });

  it('seals the plain AppSecrets of a file an older host wrote when it starts', async () => {
    mkdirSync(join(dataDir, 'state'), { recursive: true, mode: 0o700 });
    const file = join(dataDir, 'state/qqbot-accounts.json');
    writeFileSync(file, JSON.stringify({ accounts: [{ id: 'old', ...BOT }] }), { mode: 0o600 });
    host = await startHost(dataDir, { HOST_STORE: store });
    expect(readFileSync(file, 'utf8')).not.toContain(BOT.secret);
    await validates(host, 'old');
    await host.stop();
    host = await startHost(dataDir, { HOST_STORE: store });
    await validates(host, 'old');
  });
});
