import { ADMIN_ROUTES, declaredErrorCodes, QqBotAccountViewSchema } from '@host/admin-api';
import { errorHandler, mountRoutes } from '@host/host-routes';
import { SecretBox } from '@host/host-store';
import express, { Router } from 'express';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import request from 'supertest';
import { QqBotAccounts, readAccountsFile } from './accounts';
import { qqbotRoutes } from './routes';
import { QqBotWebhook } from './webhook';

describe('QQ Bot accounts', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'qqbot-accounts-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const write = (name: string, content: unknown) => {
    const file = join(dir, name);
    writeFileSync(file, typeof content === 'string' ? content : JSON.stringify(content));
    return file;
  };
  const read = (file: string) => readAccountsFile(file, (p) => resolve(dirname(file), p));

  it('reads the accounts file, with the secret inline or in a file of its own', () => {
    write('bot.secret', 'secret-from-file-1\n');
    const file = write('accounts.json', {
      accounts: [
        { id: 'main', appId: '1001', secret: 'inline-secret-1' },
        { id: 'second', appId: '1002', secretFile: 'bot.secret', apiBaseUrl: 'https://sandbox.api.sgroup.qq.com' },
      ],
    });
    const r = read(file);
    expect(r).toEqual({
      ok: true,
      accounts: [
        { id: 'main', appId: '1001', secret: 'inline-secret-1' },
        { id: 'second', appId: '1002', secret: 'secret-from-file-1', apiBaseUrl: 'https://sandbox.api.sgroup.qq.com' },
      ],
    });
  });

  it('reports every problem of the accounts file with where it is, never the secret', () => {
    const file = write('accounts.json', {
      accounts: [
        { id: 'Main!', appId: '1001', secret: 'a-secret-value-1' },
        { id: 'x', appId: '1002' },
        { id: 'y', appId: '1003', secret: 'short' },
        { id: 'z', appId: '1004', secretFile: 'missing.secret' },
        { id: 'w', appId: '1005', secret: 'a-secret-value-2', apiBaseUrl: 'ftp://x' },
      ],
    });
    const r = read(file);
    expect(r.ok).toBe(false);
    const errors = (r as { errors: string[] }).errors.join('\n');
    expect(errors).toMatch(/accounts\.0\.id must be 1 to 64 lowercase/);
    expect(errors).toMatch(/accounts\.1 needs exactly one of "secret" and "secretFile"/);
    expect(errors).toMatch(/accounts\.2\.secret must be the AppSecret/);
    expect(errors).toMatch(/accounts\.3\.secretFile cannot be read \(ENOENT\)/);
    expect(errors).toMatch(/accounts\.4\.apiBaseUrl must be an http or https URL/);
    expect(errors).not.toContain('a-secret-value');
    expect(
      read(
        write('dup.json', {
          accounts: [
            { id: 'a', appId: '1', secret: 'aaaaaaaa' },
            { id: 'a', appId: '2', secret: 'bbbbbbbb' },
          ],
        }),
      ),
    ).toEqual({
      ok: false,
      errors: [expect.stringContaining('two accounts have the id a')],
    });
    expect(read(join(dir, 'none.json'))).toEqual({ ok: false, errors: [expect.stringContaining('cannot be read: ENOENT')] });
  });

  function app(accounts: QqBotAccounts) {
    const webhook = new QqBotWebhook({
      accounts,
      accept: () => ({ accepted: true, durable: Promise.resolve(), routed: Promise.resolve() }),
      log: () => undefined,
    });
    const router = Router();
    router.use(express.json());
    mountRoutes(router, qqbotRoutes({ accounts, webhook }));
    const a = express();
    a.use('/api', router);
    a.use(errorHandler({}));
    return a;
  }

  it('adds accounts through the admin API, keeps them in a file only the host user reads, and never shows the secret', async () => {
    const storeFile = join(dir, 'qqbot-accounts.json');
    const accounts = new QqBotAccounts({ storeFile });
    await accounts.load([{ id: 'from-file', appId: '1001', secret: 'file-secret-123' }]);
    const a = app(accounts);
    const added = await request(a)
      .post('/api/qqbot/accounts')
      .send({ id: 'api-bot', appId: '1002', secret: 'api-secret-4567', displayName: 'API bot' });
    expect(added.status).toBe(201);
    expect(JSON.stringify(added.body)).not.toContain('api-secret-4567');
    const list = await request(a).get('/api/qqbot/accounts').set('host', 'bot.example.com:8080');
    expect(list.status).toBe(200);
    expect(JSON.stringify(list.body)).not.toMatch(/secret-/);
    const views = list.body.accounts.map((v: unknown) => QqBotAccountViewSchema.parse(v));
    expect(views.map((v: { id: string; source: string; webhookUrl: string }) => [v.id, v.source, v.webhookUrl])).toEqual([
      ['from-file', 'file', 'http://bot.example.com:8080/api/qqbot/webhook/from-file'],
      ['api-bot', 'api', 'http://bot.example.com:8080/api/qqbot/webhook/api-bot'],
    ]);
    expect(statSync(storeFile).mode & 0o777).toBe(0o600);
    expect(JSON.parse(readFileSync(storeFile, 'utf8')).accounts.map((x: { id: string }) => x.id)).toEqual(['api-bot']);

    // A restart finds it again.
    const again = new QqBotAccounts({ storeFile });
    await again.load([{ id: 'from-file', appId: '1001', secret: 'file-secret-123' }]);
    expect(again.list().map((x) => x.id)).toEqual(['from-file', 'api-bot']);
    await again.close();
    await accounts.close();
  });

  it('seals each AppSecret in the store file with the host key, and needs that key to read it back', async () => {
    const storeFile = join(dir, 'qqbot-accounts.json');
    const key = new SecretBox(randomBytes(32));
    const accounts = new QqBotAccounts({ storeFile, secrets: key });
    await accounts.load([]);
    await accounts.add({ id: 'api-bot', appId: '1002', secret: 'api-secret-4567' });
    const text = readFileSync(storeFile, 'utf8');
    expect(text).not.toContain('api-secret-4567');
    expect(JSON.parse(text).accounts).toEqual([{ id: 'api-bot', appId: '1002', secret: expect.stringMatching(/^sealed:v1:/) }]);
    await accounts.close();

    const again = new QqBotAccounts({ storeFile, secrets: key });
    await again.load([]);
    expect(again.get('api-bot')?.config.secret).toBe('api-secret-4567');
    await again.close();

    // Another host key, or none, cannot open it: the host does not start with an account it cannot sign for.
    await expect(new QqBotAccounts({ storeFile, secrets: new SecretBox(randomBytes(32)) }).load([])).rejects.toThrow(
      /The AppSecret of QQ Bot account "api-bot" .* was sealed with another host key/,
    );
    await expect(new QqBotAccounts({ storeFile }).load([])).rejects.toThrow(/holds sealed AppSecrets, and no host key/);
  });

  it('reads a store file of plain AppSecrets that an older host wrote, and seals them at once', async () => {
    const storeFile = write('qqbot-accounts.json', {
      accounts: [
        { id: 'old-bot', appId: '1003', secret: 'plain-secret-890' },
        { id: 'older-bot', appId: '1004', secret: 'plain-secret-891' },
      ],
    });
    const key = new SecretBox(randomBytes(32));
    const accounts = new QqBotAccounts({ storeFile, secrets: key });
    await accounts.load([]);
    expect(accounts.list().map((a) => [a.id, a.config.secret])).toEqual([
      ['old-bot', 'plain-secret-890'],
      ['older-bot', 'plain-secret-891'],
    ]);
    const text = readFileSync(storeFile, 'utf8');
    expect(text).not.toContain('plain-secret-89');
    expect(JSON.parse(text).accounts.map((a: { secret: string }) => key.open(a.secret, 'test'))).toEqual([
      'plain-secret-890',
      'plain-secret-891',
    ]);
    expect(statSync(storeFile).mode & 0o777).toBe(0o600);
    await accounts.close();
  });

  it('answers the declared errors: duplicates, unknown accounts, file accounts that cannot be removed here, invalid bodies', async () => {
    const accounts = new QqBotAccounts({ reservedIds: ['console-bot'] });
    await accounts.load([{ id: 'main', appId: '1001', secret: 'file-secret-123' }]);
    const a = app(accounts);
    const cases: [() => request.Test, string, keyof typeof ADMIN_ROUTES][] = [
      // The console bot's id: messages.send would not know which provider to use.
      [
        () => request(a).post('/api/qqbot/accounts').send({ id: 'console-bot', appId: '5', secret: 'another-secret' }),
        'QQBOT_ACCOUNT_EXISTS',
        'addQqBotAccount',
      ],
      [
        () => request(a).post('/api/qqbot/accounts').send({ id: 'main', appId: '9', secret: 'another-secret' }),
        'QQBOT_ACCOUNT_EXISTS',
        'addQqBotAccount',
      ],
      [
        () => request(a).post('/api/qqbot/accounts').send({ id: 'other', appId: '1001', secret: 'another-secret' }),
        'QQBOT_ACCOUNT_EXISTS',
        'addQqBotAccount',
      ],
      [() => request(a).post('/api/qqbot/accounts').send({ id: 'x', appId: '1', secret: 'a b c d e f' }), 'BAD_REQUEST', 'addQqBotAccount'],
      [() => request(a).get('/api/qqbot/accounts/nobody'), 'QQBOT_ACCOUNT_NOT_FOUND', 'getQqBotAccount'],
      [() => request(a).delete('/api/qqbot/accounts/nobody'), 'QQBOT_ACCOUNT_NOT_FOUND', 'removeQqBotAccount'],
      [() => request(a).delete('/api/qqbot/accounts/main'), 'QQBOT_ACCOUNT_READ_ONLY', 'removeQqBotAccount'],
    ];
    for (const [req, code, route] of cases) {
      const res = await req();
      expect(res.body.error.code).toBe(code);
      expect(declaredErrorCodes(ADMIN_ROUTES[route])).toContain(code);
    }
    await request(a).post('/api/qqbot/accounts').send({ id: 'temp', appId: '7', secret: 'temp-secret-1' }).expect(201);
    await request(a).delete('/api/qqbot/accounts/temp').expect(200, { removed: true, id: 'temp' });
    // (text/plain: the JSON parser of this test router would take the body the webhook reads itself)
    await request(a).post('/api/qqbot/webhook/temp').set('content-type', 'text/plain').send('{}').expect(404);
    await accounts.close();
  });
});
