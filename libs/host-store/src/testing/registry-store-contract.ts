import type { PluginRecord, RegistryStore, StdioPluginRecord } from '@host/host-core';

/** How the contract suite gets stores of the implementation under test. */
export interface RegistryStoreHarness {
  /** A new, empty store (called before each test). */
  open(): Promise<RegistryStore>;
  /**
   * The same storage opened again after `close()`, as a restarted host would.
   * Leave it out for stores that keep nothing (in-memory).
   */
  reopen?(): Promise<RegistryStore>;
  /** Removes what `open` created (called after each test, after the store is closed). */
  cleanup?(): Promise<void>;
}

/** A stdio record with a given version; the suite's only fixture. */
export function contractRecord(pluginId: string, version = '1.0.0', overrides: Partial<StdioPluginRecord> = {}): StdioPluginRecord {
  return {
    pluginId,
    transport: 'stdio-jsonrpc',
    installedAt: '2024-01-01T00:00:00.000Z',
    updatedAt: '2024-01-01T00:00:00.000Z',
    enabled: false,
    packageSha256: 'ab'.repeat(32),
    manifest: { pluginId, version } as StdioPluginRecord['manifest'],
    ...overrides,
  };
}

const versionOf = (r: PluginRecord | undefined) => r?.manifest.version;

/** Adds one to the patch number of the record's version: a read-modify-write that loses counts if updates interleave. */
function bumpPatch(r: PluginRecord): PluginRecord {
  const [major, minor, patch] = r.manifest.version.split('.').map(Number);
  return { ...r, manifest: { ...r.manifest, version: `${major}.${minor}.${patch! + 1}` } } as PluginRecord;
}

/**
 * The behaviour every `RegistryStore` must have, as a Jest suite. Run it from
 * the implementation's spec:
 *
 * ```ts
 * describeRegistryStoreContract('JsonRegistryStore', { open: ..., reopen: ..., cleanup: ... });
 * ```
 */
export function describeRegistryStoreContract(name: string, harness: RegistryStoreHarness): void {
  describe(`${name} (RegistryStore contract)`, () => {
    let store: RegistryStore;
    let closed = false;
    const close = async () => {
      if (!closed) await store.close();
      closed = true;
    };
    beforeEach(async () => {
      store = await harness.open();
      closed = false;
    });
    afterEach(async () => {
      await close();
      await harness.cleanup?.();
    });

    describe('records', () => {
      it('gets what was put, and lists every record ordered by pluginId', async () => {
        await store.put(contractRecord('com.example.b'));
        await store.put(contractRecord('com.example.a'));
        expect(await store.get('com.example.a')).toEqual(contractRecord('com.example.a'));
        expect(await store.get('com.example.missing')).toBeUndefined();
        expect((await store.list()).map((r) => r.pluginId)).toEqual(['com.example.a', 'com.example.b']);
      });

      it("keeps the order of a record's keys as written: a manifest's settings show in the author's order", async () => {
        const order = ['greeting', 'units', 'apiKey', 'Zeta', 'alpha'];
        const configSchema = Object.fromEntries(order.map((k) => [k, { type: 'string', label: k }]));
        const record = contractRecord('com.example.ordered', '1.0.0', {
          manifest: { pluginId: 'com.example.ordered', version: '1.0.0', settings: { configSchema } } as StdioPluginRecord['manifest'],
        });
        const keysOf = (r: PluginRecord | undefined) => Object.keys(r?.manifest.settings?.configSchema ?? {});
        await store.put(record);
        expect(keysOf(await store.get('com.example.ordered'))).toEqual(order);
        expect(keysOf((await store.list())[0])).toEqual(order);
        await store.update('com.example.ordered', (r) => ({ ...r, enabled: true }));
        expect(keysOf(await store.get('com.example.ordered'))).toEqual(order);
        if (harness.reopen) {
          await close();
          store = await harness.reopen();
          closed = false;
          expect(keysOf(await store.get('com.example.ordered'))).toEqual(order);
        }
      });

      it('keeps every one of many concurrent puts of different ids', async () => {
        await Promise.all(Array.from({ length: 20 }, (_, i) => store.put(contractRecord(`com.example.p${i}`))));
        expect(await store.list()).toHaveLength(20);
      });

      it('put replaces the record of the same pluginId', async () => {
        await store.put(contractRecord('com.example.a', '1.0.0'));
        await store.put(contractRecord('com.example.a', '2.0.0'));
        expect(versionOf(await store.get('com.example.a'))).toBe('2.0.0');
        expect(await store.list()).toHaveLength(1);
      });

      it('hands out copies: changing a returned or a given object changes nothing stored', async () => {
        const given = contractRecord('com.example.a');
        await store.put(given);
        given.enabled = true;
        const got = (await store.get('com.example.a'))!;
        got.manifest.version = '9.9.9';
        (await store.list())[0]!.enabled = true;
        const updated = (await store.update('com.example.a', (r) => ({ ...r, updatedAt: '2024-02-02T00:00:00.000Z' })))!;
        updated.enabled = true;
        expect(await store.get('com.example.a')).toEqual({ ...contractRecord('com.example.a'), updatedAt: '2024-02-02T00:00:00.000Z' });
      });

      it('finds no record or meta value under inherited property names', async () => {
        await store.put(contractRecord('com.example.a'));
        for (const key of ['__proto__', 'constructor', 'toString', 'hasOwnProperty']) {
          expect(await store.get(key)).toBeUndefined();
          expect(await store.update(key, () => contractRecord(key))).toBeUndefined();
          expect(await store.getMeta(key)).toBeUndefined();
        }
      });

      it('delete removes the record, and deleting a missing one is no error', async () => {
        await store.put(contractRecord('com.example.a'));
        await store.put(contractRecord('com.example.b'));
        await store.delete('com.example.a');
        await store.delete('com.example.a');
        await store.delete('com.example.never');
        expect(await store.get('com.example.a')).toBeUndefined();
        expect((await store.list()).map((r) => r.pluginId)).toEqual(['com.example.b']);
      });
    });

    describe('putIfAbsent', () => {
      it('stores a record for a free id and answers undefined', async () => {
        expect(await store.putIfAbsent(contractRecord('com.example.a'))).toBeUndefined();
        expect(await store.get('com.example.a')).toEqual(contractRecord('com.example.a'));
      });

      it('leaves a taken id alone and answers the record that holds it', async () => {
        await store.put(contractRecord('com.example.a', '1.0.0'));
        const taken = await store.putIfAbsent(contractRecord('com.example.a', '2.0.0', { enabled: true }));
        expect(taken).toEqual(contractRecord('com.example.a', '1.0.0'));
        expect(await store.get('com.example.a')).toEqual(contractRecord('com.example.a', '1.0.0'));
      });

      it('lets exactly one of many concurrent calls for one id win; the others see the winner', async () => {
        const versions = Array.from({ length: 12 }, (_, i) => `1.0.${i}`);
        const answers = await Promise.all(versions.map((v) => store.putIfAbsent(contractRecord('com.example.a', v))));
        const winners = versions.filter((_, i) => answers[i] === undefined);
        expect(winners).toHaveLength(1);
        const stored = await store.get('com.example.a');
        expect(versionOf(stored)).toBe(winners[0]);
        for (const a of answers) if (a !== undefined) expect(a).toEqual(stored);
      });

      it('stores again once the id was deleted', async () => {
        await store.put(contractRecord('com.example.a', '1.0.0'));
        await store.delete('com.example.a');
        expect(await store.putIfAbsent(contractRecord('com.example.a', '2.0.0'))).toBeUndefined();
        expect(versionOf(await store.get('com.example.a'))).toBe('2.0.0');
      });
    });

    describe('update', () => {
      it('stores the changed record and answers it', async () => {
        await store.put(contractRecord('com.example.a'));
        const answer = await store.update('com.example.a', (r) => ({ ...r, enabled: true }));
        expect(answer).toEqual({ ...contractRecord('com.example.a'), enabled: true });
        expect(await store.get('com.example.a')).toEqual(answer);
      });

      it('writes nothing when the change answers undefined, and answers the stored record', async () => {
        await store.put(contractRecord('com.example.a'));
        expect(await store.update('com.example.a', () => undefined)).toEqual(contractRecord('com.example.a'));
        expect(await store.get('com.example.a')).toEqual(contractRecord('com.example.a'));
      });

      it('neither calls the change nor creates a record when there is none', async () => {
        const change = jest.fn((r: PluginRecord) => r);
        expect(await store.update('com.example.a', change)).toBeUndefined();
        await store.put(contractRecord('com.example.b'));
        await store.delete('com.example.b');
        expect(await store.update('com.example.b', change)).toBeUndefined();
        expect(change).not.toHaveBeenCalled();
        expect(await store.list()).toEqual([]);
      });

      it('loses no write when many updates of one record run at once', async () => {
        await store.put(contractRecord('com.example.a', '1.0.0'));
        await Promise.all(Array.from({ length: 25 }, () => store.update('com.example.a', bumpPatch)));
        expect(versionOf(await store.get('com.example.a'))).toBe('1.0.25');
      });

      it('keeps both of two concurrent updates that change different fields', async () => {
        await store.put(contractRecord('com.example.a', '1.0.0'));
        await Promise.all([
          store.update('com.example.a', (r) => ({ ...r, enabled: true })),
          store.update(
            'com.example.a',
            (r) => ({ ...r, packageSha256: 'cd'.repeat(32), manifest: { ...r.manifest, version: '2.0.0' } }) as PluginRecord,
          ),
        ]);
        expect(await store.get('com.example.a')).toMatchObject({
          enabled: true,
          packageSha256: 'cd'.repeat(32),
          manifest: { version: '2.0.0' },
        });
      });

      it('refuses a change of pluginId and a change that throws, writing nothing', async () => {
        await store.put(contractRecord('com.example.a'));
        await expect(store.update('com.example.a', (r) => ({ ...r, pluginId: 'com.example.b' }))).rejects.toThrow(/pluginId/);
        await expect(
          store.update('com.example.a', () => {
            throw new Error('the change failed');
          }),
        ).rejects.toThrow('the change failed');
        expect(await store.list()).toEqual([contractRecord('com.example.a')]);
        // The store goes on working after a refused update.
        expect(versionOf(await store.update('com.example.a', bumpPatch))).toBe('1.0.1');
      });
    });

    describe('meta', () => {
      it('keeps key-value host state apart from records', async () => {
        expect(await store.getMeta('adminTokenSha256')).toBeUndefined();
        await store.setMeta('adminTokenSha256', 'one');
        await store.setMeta('adminTokenSha256', 'two');
        await store.setMeta('other', 'x');
        expect(await store.getMeta('adminTokenSha256')).toBe('two');
        expect(await store.getMeta('other')).toBe('x');
        expect(await store.list()).toEqual([]);
      });

      it('sets a value only when none is stored, and says which value won', async () => {
        const results = await Promise.all([store.setMetaIfAbsent('k', 'first'), store.setMetaIfAbsent('k', 'second')]);
        expect(results).toEqual(['first', 'first']);
        expect(await store.getMeta('k')).toBe('first');
        await store.setMeta('k', 'third');
        expect(await store.setMetaIfAbsent('k', 'fourth')).toBe('third');
      });
    });

    it('refuses writes after close', async () => {
      await close();
      await expect(store.put(contractRecord('com.example.a'))).rejects.toThrow(/closed/);
      await expect(store.putIfAbsent(contractRecord('com.example.a'))).rejects.toThrow(/closed/);
      await expect(store.update('com.example.a', (r) => r)).rejects.toThrow(/closed/);
      await expect(store.setMeta('k', 'v')).rejects.toThrow(/closed/);
    });

    if (harness.reopen) {
      const reopen = harness.reopen.bind(harness);
      it('keeps records, updates, deletions and meta across close and reopen', async () => {
        await store.put(contractRecord('com.example.a'));
        await store.putIfAbsent(contractRecord('com.example.b'));
        await store.putIfAbsent(contractRecord('com.example.c'));
        await store.update('com.example.b', (r) => ({ ...r, enabled: true }));
        await store.delete('com.example.c');
        await store.setMeta('k', 'v');
        // Writes still in flight at close are not lost.
        const pending = store.update('com.example.a', bumpPatch);
        await close();
        await pending;
        store = await reopen();
        closed = false;
        expect(await store.list()).toEqual([
          contractRecord('com.example.a', '1.0.1'),
          { ...contractRecord('com.example.b'), enabled: true },
        ]);
        expect(await store.getMeta('k')).toBe('v');
      });
    }
  });
}
