import type { ReplayStore } from '@host/host-core';

/** How the contract suite gets stores of the implementation under test. */
export interface ReplayStoreHarness {
  /** A new, empty store (called before each test), bounded to `maxEntries` keys when given. */
  open(o?: { maxEntries?: number }): Promise<ReplayStore>;
  /** The same storage opened again, as a restarted host would (after `close`). Leave it out for stores that keep nothing. */
  reopen?(): Promise<ReplayStore>;
  /** Closes a store before it is reopened, as a stopping host would. */
  close?(store: ReplayStore): Promise<void>;
  /** Brings the store within its count bound now (stores that prune in the background). */
  prune?(store: ReplayStore, nowMs: number): Promise<void>;
  /** Removes what `open` created (called after each test). */
  cleanup?(): Promise<void>;
}

const NOW = 1_750_000_000_000;
const LATER = NOW + 600_000;

/**
 * The behaviour every `ReplayStore` must have, as a Jest suite. Run it from
 * the implementation's spec:
 *
 * ```ts
 * describeReplayStoreContract('FileReplayStore', { open: ..., reopen: ..., cleanup: ... });
 * ```
 */
export function describeReplayStoreContract(name: string, harness: ReplayStoreHarness): void {
  describe(`${name} (ReplayStore contract)`, () => {
    let store: ReplayStore;
    beforeEach(async () => {
      store = await harness.open();
    });
    afterEach(async () => {
      await harness.close?.(store);
      await harness.cleanup?.();
    });

    it('takes a key once until it expires, then again', async () => {
      expect(await store.claim('qqbot:1', ['event:a'], NOW, LATER)).toBe(true);
      expect(await store.claim('qqbot:1', ['event:a'], NOW + 1000, LATER + 1000)).toBe(false);
      expect(await store.claim('qqbot:1', ['event:a'], LATER, LATER + 600_000)).toBe(true);
    });

    it('keeps scopes apart', async () => {
      expect(await store.claim('qqbot:1', ['event:a'], NOW, LATER)).toBe(true);
      expect(await store.claim('qqbot:2', ['event:a'], NOW, LATER)).toBe(true);
    });

    it('refuses a claim sharing any key with a taken one, and records none of its keys then', async () => {
      expect(await store.claim('s', ['event:e1', 'message:m1'], NOW, LATER)).toBe(true);
      // The same message under a new event id: a replay, and its event id stays unknown.
      expect(await store.claim('s', ['event:e2', 'message:m1'], NOW, LATER)).toBe(false);
      expect(await store.claim('s', ['event:e2'], NOW, LATER)).toBe(true);
      expect(await store.claim('s', ['event:e1', 'message:m9'], NOW, LATER)).toBe(false);
      expect(await store.claim('s', ['message:m9'], NOW, LATER)).toBe(true);
    });

    it('forgets keys on request, so the next claim of them is taken', async () => {
      expect(await store.claim('s', ['event:e1', 'message:m1'], NOW, LATER)).toBe(true);
      await store.forget('s', ['event:e1', 'message:m1']);
      expect(await store.claim('s', ['event:e1', 'message:m1'], NOW, LATER)).toBe(true);
      expect(await store.claim('s', ['message:m1'], NOW, LATER)).toBe(false);
    });

    it('of many claims of one key at once, takes exactly one', async () => {
      const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => store.claim('s', [`event:${i}`, 'message:same'], NOW, LATER)));
      expect(answers.filter(Boolean)).toHaveLength(1);
    });

    it('stays within its count bound, forgetting the oldest keys first', async () => {
      await harness.close?.(store);
      store = await harness.open({ maxEntries: 3 });
      for (const [i, id] of ['a', 'b', 'c', 'd'].entries()) expect(await store.claim('s', [id], NOW + i, LATER + i)).toBe(true);
      await harness.prune?.(store, NOW + 4);
      expect(await store.claim('s', ['d'], NOW + 5, LATER + 5)).toBe(false);
      expect(await store.claim('s', ['a'], NOW + 5, LATER + 5)).toBe(true);
    });

    if (harness.reopen) {
      const reopen = harness.reopen;
      it('refuses after a restart what it took before, and still forgets', async () => {
        expect(await store.claim('s', ['event:e1', 'message:m1'], NOW, LATER)).toBe(true);
        expect(await store.claim('s', ['event:e2'], NOW, LATER)).toBe(true);
        expect(await store.claim('s', ['event:e3'], NOW, NOW + 10)).toBe(true);
        await store.forget('s', ['event:e2']);
        await harness.close?.(store);
        store = await reopen();
        expect(await store.claim('s', ['event:e9', 'message:m1'], NOW + 1000, LATER)).toBe(false);
        expect(await store.claim('s', ['event:e1'], NOW + 1000, LATER)).toBe(false);
        expect(await store.claim('s', ['event:e2'], NOW + 1000, LATER)).toBe(true);
        expect(await store.claim('s', ['event:e3'], NOW + 1000, LATER)).toBe(true);
        await store.forget('s', ['event:e1', 'message:m1']);
        expect(await store.claim('s', ['event:e1', 'message:m1'], NOW + 2000, LATER)).toBe(true);
      });
    }
  });
}
