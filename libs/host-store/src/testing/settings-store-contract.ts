import type { SettingsStore } from '@host/host-core';

/** How the contract suite gets stores of the implementation under test. */
export interface SettingsStoreHarness {
  /** A new, empty store (called before each test). */
  open(): Promise<SettingsStore>;
  /** The same storage opened again, as a restarted host would. Leave it out for stores that keep nothing. */
  reopen?(): Promise<SettingsStore>;
  /** Removes what `open` created (called after each test). */
  cleanup?(): Promise<void>;
}

const A = 'com.example.a';
const B = 'com.example.b';

/**
 * The behaviour every `SettingsStore` must have, as a Jest suite. Run it from
 * the implementation's spec:
 *
 * ```ts
 * describeSettingsStoreContract('FileSettingsStore', { open: ..., reopen: ..., cleanup: ... });
 * ```
 */
export function describeSettingsStoreContract(name: string, harness: SettingsStoreHarness): void {
  describe(`${name} (SettingsStore contract)`, () => {
    let store: SettingsStore;
    beforeEach(async () => {
      store = await harness.open();
    });
    afterEach(async () => {
      await harness.cleanup?.();
    });

    it('answers {} for a plugin without values, then what the last update stored, per plugin', async () => {
      expect(await store.get(A)).toEqual({});
      expect(await store.update(A, (v) => ({ ...v, mode: 'fast', retries: 3, verbose: true }))).toEqual({
        mode: 'fast',
        retries: 3,
        verbose: true,
      });
      expect(await store.update(A, (v) => ({ ...v, retries: 4 }))).toEqual({ mode: 'fast', retries: 4, verbose: true });
      await store.update(B, () => ({ token: 'secret' }));
      expect(await store.get(A)).toEqual({ mode: 'fast', retries: 4, verbose: true });
      expect(await store.get(B)).toEqual({ token: 'secret' });
    });

    it('loses no change when updates of one plugin run at once', async () => {
      await Promise.all(Array.from({ length: 15 }, (_, i) => store.update(A, (v) => ({ ...v, [`k${i}`]: i }))));
      expect(Object.keys(await store.get(A))).toHaveLength(15);
    });

    it('writes nothing when the change throws, and goes on working', async () => {
      await store.update(A, () => ({ a: 1 }));
      await expect(
        store.update(A, () => {
          throw new Error('invalid');
        }),
      ).rejects.toThrow('invalid');
      expect(await store.get(A)).toEqual({ a: 1 });
      expect(await store.update(A, (v) => ({ ...v, b: 2 }))).toEqual({ a: 1, b: 2 });
    });

    it('forgets the values of one plugin on delete; deleting again is no error', async () => {
      await store.update(A, () => ({ a: 1 }));
      await store.update(B, () => ({ b: 1 }));
      await store.delete(A);
      await store.delete(A);
      expect(await store.get(A)).toEqual({});
      expect(await store.get(B)).toEqual({ b: 1 });
    });

    if (harness.reopen) {
      const reopen = harness.reopen.bind(harness);
      it('keeps values and deletions across a reopen', async () => {
        await store.update(A, () => ({ a: 1 }));
        await store.update(B, () => ({ b: 1 }));
        await store.delete(B);
        const again = await reopen();
        expect(await again.get(A)).toEqual({ a: 1 });
        expect(await again.get(B)).toEqual({});
      });
    }
  });
}
