import {
  ADMIN_ROUTE_LIST,
  declaredErrorCodes,
  ErrorBodySchema,
  matchRoute,
  SessionResponseSchema,
  SignInResponseSchema,
} from '@host/admin-api';
import { hostPaths } from '@host/host-core';
import { PluginInstaller } from '@host/host-installer';
import { createUnavailableRuntime } from '@host/host-installer/testing';
import { FilePendingUpdateStore, FileSettingsStore, JsonRegistryStore } from '@host/host-store';
import type { Express } from 'express';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { ADMIN_APP_CSP, adminAppRouter } from './admin-app';
import { createApp } from './app';
import { ensureAdminToken } from './auth';
import { SessionStore, type SessionOptions } from './session';

describe('admin app sessions', () => {
  let dataDir: string;
  let app: Express;
  let token: string;
  let clock: number;
  let close: () => Promise<void>;

  async function setup(options: SessionOptions & { perAddressPerMinute?: number } = {}, appDir?: string): Promise<void> {
    const { perAddressPerMinute, ...sessionOptions } = options;
    const paths = hostPaths(dataDir);
    const store = await JsonRegistryStore.open(paths.stateDir);
    const runtime = createUnavailableRuntime();
    const installer = new PluginInstaller({
      paths,
      store,
      pendingUpdates: new FilePendingUpdateStore(join(paths.stateDir, 'pending')),
      runtime,
    });
    await installer.init();
    const admin = await ensureAdminToken(store);
    token = admin.generated!;
    app = createApp({
      paths,
      store,
      settings: new FileSettingsStore(paths),
      installer,
      runtime,
      adminTokenHash: admin.hash,
      sessions: new SessionStore({ now: () => clock, ...sessionOptions }),
      authThrottle: { now: () => clock, ...(perAddressPerMinute ? { perAddressPerMinute } : {}) },
      rootRouters: appDir ? [adminAppRouter(appDir)] : [],
    });
    close = () => store.close();
  }

  beforeEach(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'api-session-'));
    clock = Date.parse('2026-01-01T00:00:00Z');
  });
  afterEach(async () => {
    await close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  /** Signs in; answers the cookie pair and the CSRF token. */
  async function signIn(): Promise<{ cookie: string; csrf: string }> {
    const res = await request(app).post('/api/session').send({ token });
    expect(res.status).toBe(201);
    const parsed = SignInResponseSchema.parse(res.body);
    const setCookie = ([] as string[]).concat(res.headers['set-cookie'] ?? []);
    expect(setCookie).toHaveLength(1);
    return { cookie: setCookie[0]!.split(';')[0]!, csrf: parsed.session.csrfToken };
  }

  function expectError(res: request.Response, status: number, code: string): void {
    expect({ status: res.status, code: res.body?.error?.code }).toEqual({ status, code });
    expect(ErrorBodySchema.safeParse(res.body).success).toBe(true);
    // The failure is one its route declares.
    const path = new URL((res.request as unknown as { url: string }).url).pathname.replace(/^\/api/, '');
    const contract = matchRoute(ADMIN_ROUTE_LIST, (res.request as unknown as { method: string }).method, path);
    expect(contract && declaredErrorCodes(contract)).toContain(code);
  }

  it('exchanges the token for an HttpOnly, SameSite=Strict cookie that never holds the token', async () => {
    await setup();
    const res = await request(app).post('/api/session').send({ token });
    expect(res.status).toBe(201);
    const setCookie = String(res.headers['set-cookie']);
    expect(setCookie).toMatch(/^host_admin_session=[A-Za-z0-9_-]{43}; Path=\/api; HttpOnly; SameSite=Strict; Max-Age=43200$/);
    expect(setCookie).not.toContain(token);
    expect(JSON.stringify(res.body)).not.toContain(token);
  });

  it('lets the cookie read, and change with the CSRF token; bearer tokens keep working without either', async () => {
    await setup();
    const { cookie, csrf } = await signIn();
    await request(app).get('/api/plugins').set('Cookie', cookie).expect(200);
    const who = await request(app).get('/api/session').set('Cookie', cookie).expect(200);
    expect(SessionResponseSchema.parse(who.body)).toMatchObject({ authenticatedBy: 'session', session: { csrfToken: csrf } });
    const change = await request(app)
      .post('/api/plugins/com.example.none/start')
      .set('Cookie', cookie)
      .set('X-CSRF-Token', csrf)
      .set('Sec-Fetch-Site', 'same-origin');
    // Past the session checks: the route itself answers.
    expect(change.body.error.code).toBe('PLUGIN_NOT_FOUND');
    const bearer = await request(app).get('/api/session').set('Authorization', `Bearer ${token}`).expect(200);
    expect(bearer.body).toEqual({ authenticatedBy: 'bearer', session: null });
    const bearerChange = await request(app).post('/api/plugins/com.example.none/start').set('Authorization', `Bearer ${token}`);
    expect(bearerChange.body.error.code).toBe('PLUGIN_NOT_FOUND');
  });

  it('a wrong token: SESSION_TOKEN_INVALID and no cookie; a wrong bearer token with a cookie is still refused', async () => {
    await setup();
    const res = await request(app).post('/api/session').send({ token: 'not-the-admin-token-at-all' });
    expectError(res, 401, 'SESSION_TOKEN_INVALID');
    expect(res.headers['set-cookie']).toBeUndefined();
    expectError(await request(app).post('/api/session').send({}), 400, 'BAD_REQUEST');
    const { cookie } = await signIn();
    expectError(await request(app).get('/api/plugins').set('Cookie', cookie).set('Authorization', 'Bearer wrong'), 401, 'UNAUTHORIZED');
  });

  it('too many wrong tokens from an address in a minute: SESSION_SIGN_IN_THROTTLED, even for the right one, until the minute passes', async () => {
    await setup({ perAddressPerMinute: 3 });
    for (let i = 0; i < 3; i++)
      expectError(
        await request(app)
          .post('/api/session')
          .send({ token: `wrong-${i}` }),
        401,
        'SESSION_TOKEN_INVALID',
      );
    expectError(await request(app).post('/api/session').send({ token }), 429, 'SESSION_SIGN_IN_THROTTLED');
    clock += 61_000;
    await signIn();
  });

  it('a state-changing request with the cookie but without the right CSRF token: CSRF_TOKEN_INVALID', async () => {
    await setup();
    const { cookie } = await signIn();
    expectError(await request(app).post('/api/plugins/com.example.none/start').set('Cookie', cookie), 403, 'CSRF_TOKEN_INVALID');
    expectError(
      await request(app)
        .put('/api/plugins/com.example.none/settings')
        .set('Cookie', cookie)
        .set('X-CSRF-Token', 'guess')
        .send({ values: {} }),
      403,
      'CSRF_TOKEN_INVALID',
    );
    const other = await signIn();
    // Another session's token is not this one's.
    expectError(await request(app).delete('/api/session').set('Cookie', cookie).set('X-CSRF-Token', other.csrf), 403, 'CSRF_TOKEN_INVALID');
  });

  it('a request from a page of another site: ORIGIN_REFUSED, at sign-in too', async () => {
    await setup();
    const { cookie, csrf } = await signIn();
    const write = () => request(app).post('/api/plugins/com.example.none/stop').set('Cookie', cookie).set('X-CSRF-Token', csrf);
    expectError(await write().set('Origin', 'https://evil.example'), 403, 'ORIGIN_REFUSED');
    expectError(await write().set('Sec-Fetch-Site', 'cross-site'), 403, 'ORIGIN_REFUSED');
    expectError(await write().set('Origin', 'null'), 403, 'ORIGIN_REFUSED');
    expectError(await request(app).post('/api/session').set('Origin', 'https://evil.example').send({ token }), 403, 'ORIGIN_REFUSED');
  });

  it('sign-out ends the session and clears the cookie; the cookie then answers SESSION_EXPIRED', async () => {
    await setup();
    const { cookie, csrf } = await signIn();
    const out = await request(app).delete('/api/session').set('Cookie', cookie).set('X-CSRF-Token', csrf).expect(200);
    expect(out.body).toEqual({ signedOut: true });
    expect(String(out.headers['set-cookie'])).toMatch(/^host_admin_session=; Path=\/api; HttpOnly; SameSite=Strict; Max-Age=0$/);
    expectError(await request(app).get('/api/plugins').set('Cookie', cookie), 401, 'SESSION_EXPIRED');
    // A cookie nobody issued is an ended session too; no cookie at all is UNAUTHORIZED.
    expectError(
      await request(app).get('/api/plugins').set('Cookie', 'host_admin_session=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA'),
      401,
      'SESSION_EXPIRED',
    );
    expectError(await request(app).get('/api/plugins').set('Cookie', 'other=1'), 401, 'UNAUTHORIZED');
  });

  it('sessions end when idle and after their lifetime, however active', async () => {
    await setup({ idleMs: 10_000, lifetimeMs: 25_000 });
    const a = await signIn();
    clock += 9_000;
    await request(app).get('/api/plugins').set('Cookie', a.cookie).expect(200);
    clock += 9_000;
    await request(app).get('/api/plugins').set('Cookie', a.cookie).expect(200);
    clock += 9_000; // 27 s after sign-in: past the lifetime though never idle for 10 s
    expectError(await request(app).get('/api/plugins').set('Cookie', a.cookie), 401, 'SESSION_EXPIRED');
    const b = await signIn();
    clock += 10_000;
    expectError(await request(app).get('/api/plugins').set('Cookie', b.cookie), 401, 'SESSION_EXPIRED');
  });

  it('keeps a bounded number of sessions: a new one beyond it ends the least recently used', async () => {
    await setup({ maxSessions: 3 });
    const s = [await signIn(), await signIn(), await signIn()];
    await request(app).get('/api/plugins').set('Cookie', s[0]!.cookie).expect(200); // s[1] is now the least recently used
    const d = await signIn();
    expectError(await request(app).get('/api/plugins').set('Cookie', s[1]!.cookie), 401, 'SESSION_EXPIRED');
    for (const live of [s[0]!, s[2]!, d]) await request(app).get('/api/plugins').set('Cookie', live.cookie).expect(200);
    const store = new SessionStore({ maxSessions: 3 });
    for (let i = 0; i < 50; i++) await store.create();
    expect(await store.size()).toBe(3);
  });

  it('serves the built app at / with a strict Content-Security-Policy, client routes included, and says how to build a missing one', async () => {
    const appDir = join(dataDir, 'admin-app');
    mkdirSync(join(appDir, 'assets'), { recursive: true });
    writeFileSync(join(appDir, 'index.html'), '<!doctype html><title>admin</title>');
    writeFileSync(join(appDir, 'assets', 'index-abc.js'), 'console.log(1)');
    await setup({}, appDir);
    for (const path of ['/', '/plugins/com.example.echo', '/playground']) {
      const res = await request(app).get(path).set('Accept', 'text/html').expect(200);
      expect(res.text).toContain('<title>admin</title>');
      expect(res.headers['content-security-policy']).toBe(ADMIN_APP_CSP);
      expect(res.headers['content-security-policy']).toMatch(/script-src 'self';/);
      expect(res.headers['content-security-policy']).not.toMatch(/unsafe-inline|unsafe-eval/);
      expect(res.headers['x-frame-options']).toBe('DENY');
    }
    const js = await request(app).get('/assets/index-abc.js').expect(200);
    expect(js.headers['content-type']).toMatch(/javascript/);
    expect(js.headers['cache-control']).toMatch(/immutable/);
    // The API keeps its own answers.
    const api = await request(app).get('/api/nothing').set('Accept', 'text/html');
    expect({ status: api.status, code: api.body.error.code }).toEqual({ status: 401, code: 'UNAUTHORIZED' });
    rmSync(join(appDir, 'index.html'));
    const missing = await request(app).get('/').set('Accept', 'text/html').expect(503);
    expect(missing.text).toContain('npx nx run admin:build');
  });
});
