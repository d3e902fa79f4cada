import { ARCHIVE_PIECE_BYTES, type ArchiveReader, type PendingUpdateStore } from '@host/host-core';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';

/** How the contract suite gets stores of the implementation under test. */
export interface PendingUpdateStoreHarness {
  /** A new, empty store (called before each test). */
  open(): Promise<PendingUpdateStore>;
  /** The same storage opened again, as a restarted host would. Leave it out for stores that keep nothing. */
  reopen?(): Promise<PendingUpdateStore>;
  /** Removes what `open` created (called after each test). */
  cleanup?(): Promise<void>;
}

const ID1 = '0b7e2a4e-8f5a-4a57-9d43-3c1a2b3c4d5e';
const ID2 = '6f1c9d2b-1e3a-4c5d-8b7a-9e0f1a2b3c4d';
const text = (bytes: Uint8Array | undefined) => (bytes ? Buffer.from(bytes).toString() : undefined);

/**
 * The behaviour every `PendingUpdateStore` must have, as a Jest suite. Run it
 * from the implementation's spec:
 *
 * ```ts
 * describePendingUpdateStoreContract('FilePendingUpdateStore', { open: ..., reopen: ..., cleanup: ... });
 * ```
 */
export function describePendingUpdateStoreContract(name: string, harness: PendingUpdateStoreHarness): void {
  describe(`${name} (PendingUpdateStore contract)`, () => {
    let store: PendingUpdateStore;
    beforeEach(async () => {
      store = await harness.open();
    });
    afterEach(async () => {
      await harness.cleanup?.();
    });

    it('keeps each archive with its description until deleted', async () => {
      expect(await store.list()).toEqual([]);
      await store.save(ID1, Buffer.from('zip one'), { id: ID1, n: 1 });
      await store.save(ID2, Buffer.from('zip two'), { id: ID2, n: 2 });
      expect((await store.list()).sort()).toEqual([ID1, ID2].sort());
      expect(await store.read(ID1)).toEqual({ id: ID1, n: 1 });
      expect(text(await store.readArchive(ID2))).toBe('zip two');
      await store.delete(ID1);
      expect(await store.list()).toEqual([ID2]);
      expect(await store.read(ID1)).toBeUndefined();
      expect(await store.readArchive(ID1)).toBeUndefined();
    });

    it('answers undefined for ids it does not have, and deleting one is no error', async () => {
      expect(await store.read(ID1)).toBeUndefined();
      expect(await store.readArchive(ID1)).toBeUndefined();
      await store.delete(ID1);
      expect(await store.list()).toEqual([]);
    });

    it('replaces both parts when saving under an id again', async () => {
      await store.save(ID1, Buffer.from('old'), { v: 1 });
      await store.save(ID1, Buffer.from('new'), { v: 2 });
      expect(await store.list()).toEqual([ID1]);
      expect(await store.read(ID1)).toEqual({ v: 2 });
      expect(text(await store.readArchive(ID1))).toBe('new');
    });

    it('copies an archive given as a reader a piece at a time, never asking for all of it at once', async () => {
      const bytes = randomBytes(2 * ARCHIVE_PIECE_BYTES + 12_345);
      const reads: number[] = [];
      const reader: ArchiveReader = {
        size: bytes.length,
        read: (position, length) => {
          reads.push(length);
          return bytes.subarray(position, position + length);
        },
      };
      await store.save(ID1, reader, { id: ID1 });
      expect(Buffer.from((await store.readArchive(ID1))!).equals(bytes)).toBe(true);
      expect(Math.max(...reads)).toBeLessThanOrEqual(ARCHIVE_PIECE_BYTES);
    });

    it('names the file of an archive when it keeps one, with the same bytes, and no file for an id it does not have', async () => {
      if (!store.archiveFile) return;
      await store.save(ID1, Buffer.from('zip one'), { id: ID1 });
      const file = await store.archiveFile(ID1);
      expect(file && readFileSync(file).toString()).toBe('zip one');
      expect(await store.archiveFile(ID2)).toBeUndefined();
      expect(await store.archiveFile('../../etc/passwd')).toBeUndefined();
    });

    if (harness.reopen) {
      const reopen = harness.reopen.bind(harness);
      it('keeps saved updates and deletions across a reopen', async () => {
        await store.save(ID1, Buffer.from('zip one'), { id: ID1 });
        await store.save(ID2, Buffer.from('zip two'), { id: ID2 });
        await store.delete(ID2);
        const again = await reopen();
        expect(await again.list()).toEqual([ID1]);
        expect(await again.read(ID1)).toEqual({ id: ID1 });
        expect(text(await again.readArchive(ID1))).toBe('zip one');
      });
    }
  });
}
