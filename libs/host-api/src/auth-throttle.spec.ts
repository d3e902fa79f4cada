import { hostPaths } from '@host/host-core';
import { PluginInstaller } from '@host/host-installer';
import { createUnavailableRuntime } from '@host/host-installer/testing';
import { FilePendingUpdateStore, FileSettingsStore, JsonRegistryStore } from '@host/host-store';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createApp } from './app';
import { ensureAdminToken } from './auth';
import { AuthThrottle, throttleKey } from './auth-throttle';

// Real connections from several loopback addresses (127.0.0.0/8 is all local on Linux), so the host sees each
// client's own address as it would behind no proxy; the clock is the test's.
describe('admin token throttling per client address', () => {
  let dataDir: string;
  let server: Server;
  let port: number;
  let token: string;
  let clock: number;
  let lines: string[];
  let throttle: AuthThrottle;
  let closeStore: () => Promise<void>;

  beforeEach(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'api-throttle-'));
    clock = Date.parse('2026-01-01T00:00:00Z');
    lines = [];
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
    throttle = new AuthThrottle({ now: () => clock, log: (m) => lines.push(m) });
    const app = createApp({
      paths,
      store,
      settings: new FileSettingsStore(paths),
      installer,
      runtime,
      adminTokenHash: admin.hash,
      sessions: { now: () => clock },
      authThrottle: throttle,
    });
    server = createServer(app).listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    port = (server.address() as AddressInfo).port;
    closeStore = () => store.close();
  });

  afterEach(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
    await closeStore();
    rmSync(dataDir, { recursive: true, force: true });
  });

  function send(
    from: string,
    method: string,
    path: string,
    headers: Record<string, string>,
    body?: string,
  ): Promise<{ status: number; code?: string }> {
    return new Promise((resolve, reject) => {
      const req = request(
        { host: '127.0.0.1', port, localAddress: from, method, path, headers: { connection: 'close', ...headers }, agent: false },
        (res) => {
          let text = '';
          res.on('data', (c: Buffer) => (text += c.toString()));
          res.on('end', () =>
            resolve({
              status: res.statusCode ?? 0,
              code: text ? (JSON.parse(text) as { error?: { code: string } }).error?.code : undefined,
            }),
          );
        },
      );
      req.on('error', reject);
      req.end(body);
    });
  }
  const signIn = (from: string, t: string) =>
    send(from, 'POST', '/api/session', { 'content-type': 'application/json' }, JSON.stringify({ token: t }));
  const bearer = (from: string, t: string) => send(from, 'GET', '/api/plugins', { authorization: `Bearer ${t}` });

  it('one address sending a wrong token every second for 90 s is throttled; the operator signs in from another every time', async () => {
    const attacker: number[] = [];
    const operator: number[] = [];
    for (let second = 0; second < 90; second++) {
      attacker.push((await signIn('127.0.0.2', `wrong-token-number-${second}`)).status);
      if (second % 10 === 5) operator.push((await signIn('127.0.0.3', token)).status);
      clock += 1_000;
    }
    expect(operator).toEqual(Array(9).fill(201));
    // Ten wrong tokens in any minute, refused unchecked in between.
    expect(attacker.filter((s) => s === 401).length).toBeLessThanOrEqual(20);
    expect(attacker.filter((s) => s === 429).length).toBeGreaterThanOrEqual(70);
    expect(attacker.slice(0, 11)).toEqual([...Array(10).fill(401), 429]);
    expect(throttle.counters).toMatchObject({
      signInFailures: attacker.filter((s) => s === 401).length,
      signInThrottled: attacker.filter((s) => s === 429).length,
    });
    // Every failure and throttle is logged with the address, at most 20 lines a minute, the rest counted.
    expect(lines[0]).toBe('sign-in with a wrong admin token from 127.0.0.2');
    expect(lines.some((l) => /^sign-in from 127\.0\.0\.2 throttled: 10 wrong admin tokens from it in the last minute/.test(l))).toBe(true);
    expect(lines.length).toBeLessThanOrEqual(2 * 20);
    expect(throttle.counters.logLinesSuppressed).toBe(90 - lines.length);
    expect(lines.some((l) => /\(\d+ similar lines left out before this one\)$/.test(l))).toBe(true);
  }, 60_000);

  it('bearer token guessing is throttled per address like sign-in; other addresses and the right token elsewhere still get in', async () => {
    const guesses: number[] = [];
    for (let i = 0; i < 200; i++) guesses.push((await bearer('127.0.0.4', `guess-${i}`)).status);
    expect(guesses.filter((s) => s === 401)).toHaveLength(10);
    expect(guesses.filter((s) => s === 429)).toHaveLength(190);
    expect(await bearer('127.0.0.4', 'guess-x')).toEqual({ status: 429, code: 'AUTH_THROTTLED' });
    // Refused unchecked: the right token from the throttled address waits too, so a lucky guess is not told apart.
    expect((await bearer('127.0.0.4', token)).code).toBe('AUTH_THROTTLED');
    expect((await bearer('127.0.0.5', token)).status).toBe(200);
    expect(await bearer('127.0.0.5', 'wrong')).toEqual({ status: 401, code: 'UNAUTHORIZED' });
    // Wrong bearer tokens and wrong sign-ins share an address's budget.
    expect((await signIn('127.0.0.4', token)).code).toBe('SESSION_SIGN_IN_THROTTLED');
    expect(throttle.counters).toMatchObject({ bearerFailures: 11, bearerThrottled: 192, signInThrottled: 1 });
    expect(lines[0]).toBe('wrong bearer token from 127.0.0.4');
    expect(lines[10]).toBe('bearer token from 127.0.0.4 throttled: 10 wrong admin tokens from it in the last minute');
    // No credentials at all is not a guess.
    for (let i = 0; i < 20; i++) expect((await send('127.0.0.6', 'GET', '/api/plugins', {})).code).toBe('UNAUTHORIZED');
    clock += 61_000;
    expect((await bearer('127.0.0.4', token)).status).toBe(200);
  }, 60_000);

  it('many addresses together reach the global ceiling', async () => {
    for (let a = 10; a < 20; a++) for (let i = 0; i < 5; i++) expect((await bearer(`127.0.0.${a}`, 'wrong')).status).toBe(401);
    expect((await bearer('127.0.0.30', token)).code).toBe('AUTH_THROTTLED');
    expect(throttle.counters).toMatchObject({ bearerFailures: 50, bearerThrottled: 1 });
    clock += 61_000;
    expect((await bearer('127.0.0.30', token)).status).toBe(200);
  }, 60_000);
});

describe('throttleKey', () => {
  it('keeps IPv4 addresses, unwraps IPv4-mapped ones and groups IPv6 by /64', () => {
    expect(throttleKey('192.0.2.7')).toBe('192.0.2.7');
    expect(throttleKey('::ffff:192.0.2.7')).toBe('192.0.2.7');
    expect(throttleKey('2001:db8:1:2:aaaa::1')).toBe('2001:db8:1:2::/64');
    expect(throttleKey('2001:db8:1:2::ffff')).toBe('2001:db8:1:2::/64');
    expect(throttleKey('2001:db8::1')).toBe('2001:db8:0:0::/64');
    expect(throttleKey('::1')).toBe('0:0:0:0::/64');
    expect(throttleKey(undefined)).toBe('unknown');
  });

  it('remembers a bounded number of addresses', () => {
    let now = 0;
    const t = new AuthThrottle({ maxAddresses: 100, globalPerMinute: 1e9, now: () => now });
    for (let i = 0; i < 5_000; i++) {
      t.failed(`10.0.${i >> 8}.${i & 255}`, 'bearer');
      now += 1;
    }
    expect(t.addressCount).toBe(100);
  });
});
