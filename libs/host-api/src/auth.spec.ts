import { JsonRegistryStore } from '@host/host-store';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ADMIN_TOKEN_META_KEY, ensureAdminToken, hashToken } from './auth';

describe('ensureAdminToken', () => {
  let dir: string;
  let store: JsonRegistryStore;
  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'auth-'));
    store = await JsonRegistryStore.open(dir);
  });
  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('generates a token once and stores only its hash', async () => {
    const first = await ensureAdminToken(store);
    expect(first.source).toBe('generated');
    expect(first.generated).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(first.hash).toBe(hashToken(first.generated!));
    expect(readFileSync(join(dir, 'registry.json'), 'utf8')).not.toContain(first.generated);
    const again = await ensureAdminToken(store);
    expect(again).toEqual({ hash: first.hash, source: 'stored' });
    expect(first.replaced).toBeUndefined();
    const reset = await ensureAdminToken(store, { reset: true });
    expect(reset.generated).not.toBe(first.generated);
    expect(reset.replaced).toBe(true);
    expect(await store.getMeta(ADMIN_TOKEN_META_KEY)).toBe(reset.hash);
  });

  it('two hosts starting at once on one store agree on one generated token', async () => {
    const [a, b] = await Promise.all([ensureAdminToken(store), ensureAdminToken(store)]);
    expect(a.hash).toBe(b.hash);
    expect([a, b].filter((r) => r.generated !== undefined)).toHaveLength(1);
    const shown = (a.generated ?? b.generated)!;
    expect(await store.getMeta(ADMIN_TOKEN_META_KEY)).toBe(hashToken(shown));
  });

  it('uses the configured token when given, and refuses a short one', async () => {
    const r = await ensureAdminToken(store, { token: 'a-long-enough-operator-token' });
    expect(r).toEqual({ hash: hashToken('a-long-enough-operator-token'), source: 'environment' });
    expect(await store.getMeta(ADMIN_TOKEN_META_KEY)).toBe(r.hash);
    expect(await ensureAdminToken(store, { token: 'a-long-enough-operator-token' })).toEqual(r);
    // Another configured token replaces the stored one, which ends the old token's sessions.
    expect(await ensureAdminToken(store, { token: 'another-long-operator-token' })).toMatchObject({
      source: 'environment',
      replaced: true,
    });
    await expect(ensureAdminToken(store, { token: 'short' })).rejects.toThrow(/at least 16 characters/);
  });
});
