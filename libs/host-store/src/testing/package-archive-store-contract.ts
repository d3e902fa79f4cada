import { randomBytes } from 'node:crypto';
import { ArchiveDigestMismatchError, sha256Hex, type PackageArchiveStore } from '../sql/package-archive-store';

/** How the contract suite gets stores of the implementation under test. */
export interface PackageArchiveStoreHarness {
  /** A new, empty store (called before each test). */
  open(): Promise<PackageArchiveStore>;
  /** Changes the kept bytes of `sha256` behind the store's back, as damaged storage would. */
  damage(sha256: string): Promise<void>;
  /** Removes what `open` created (called after each test). */
  cleanup?(): Promise<void>;
}

/** An archive given as a reader in ranges, as an uploaded file is. */
function reader(bytes: Buffer) {
  return { size: bytes.length, read: (position: number, length: number) => bytes.subarray(position, position + length) };
}

/**
 * The behaviour every `PackageArchiveStore` must have, as a Jest suite. Run it from the implementation's spec:
 *
 * ```ts
 * describePackageArchiveStoreContract('FilePackageArchiveStore', { open: ..., damage: ..., cleanup: ... });
 * ```
 */
export function describePackageArchiveStoreContract(name: string, harness: PackageArchiveStoreHarness): void {
  describe(`${name} (PackageArchiveStore contract)`, () => {
    let store: PackageArchiveStore;
    beforeEach(async () => {
      store = await harness.open();
    });
    afterEach(async () => {
      await harness.cleanup?.();
    });

    it('keeps an archive once by its SHA-256, from bytes or from a reader, and gives it back whole', async () => {
      const bytes = randomBytes(3 * 1024 * 1024 + 17);
      const digest = sha256Hex(bytes);
      expect(await store.has(digest)).toBe(false);
      expect(await store.put(reader(bytes))).toBe(digest);
      expect(await store.put(bytes)).toBe(digest);
      expect(await store.has(digest)).toBe(true);
      expect(Buffer.from((await store.get(digest))!).equals(bytes)).toBe(true);
    });

    it('answers nothing for a digest it does not keep or that is no digest', async () => {
      expect(await store.get('0'.repeat(64))).toBeUndefined();
      expect(await store.get('../../etc/passwd')).toBeUndefined();
      expect(await store.has('../../etc/passwd')).toBe(false);
    });

    it('refuses bytes that no longer match their digest', async () => {
      const digest = await store.put(Buffer.from('first and second'));
      await harness.damage(digest);
      await expect(store.get(digest)).rejects.toThrow(ArchiveDigestMismatchError);
    });

    it('forgets every archive not in the set it is told to keep, except those stored within the grace period', async () => {
      const a = await store.put(Buffer.from('a'));
      const b = await store.put(Buffer.from('b'));
      expect(await store.retainOnly(new Set([a]), 60_000)).toBe(0);
      expect(await store.has(b)).toBe(true);
      expect(await store.retainOnly(new Set([a]))).toBe(1);
      expect(await store.has(a)).toBe(true);
      expect(await store.has(b)).toBe(false);
      expect(await store.get(b)).toBeUndefined();
    });
  });
}
