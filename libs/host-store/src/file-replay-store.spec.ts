import { MemoryReplayStore, type ReplayStore } from '@host/host-core';
import { promises as fs, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FileReplayStore, REPLAY_FILE_NAME } from './file-replay-store';
import { describeReplayStoreContract } from './testing/replay-store-contract';

const NOW = 1_750_000_000_000;

describeReplayStoreContract('MemoryReplayStore', { open: async (o) => new MemoryReplayStore(o) });

let contractDir = '';
let contractBounds: { maxEntries?: number } = {};
describeReplayStoreContract('FileReplayStore', {
  open: async (o = {}) => {
    contractBounds = o;
    return FileReplayStore.open((contractDir = mkdtempSync(join(tmpdir(), 'replays-contract-'))), { ...o, now: () => NOW });
  },
  reopen: async () => FileReplayStore.open(contractDir, { ...contractBounds, now: () => NOW }),
  close: async (store: ReplayStore) => (store as FileReplayStore).close(),
  cleanup: async () => rmSync(contractDir, { recursive: true, force: true }),
});

describe('FileReplayStore', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'replays-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('keeps its file readable only by the host user, and bounded: rewritten with the live keys once appends outnumber them', async () => {
    let now = NOW;
    const store = await FileReplayStore.open(dir, { maxEntries: 100, now: () => now });
    const file = join(dir, REPLAY_FILE_NAME);
    if (process.platform !== 'win32') expect((await fs.stat(file)).mode & 0o777).toBe(0o600);
    // Claims that arrive together share a write and a sync.
    for (let round = 0; round < 30; round++) {
      now = NOW + round * 100;
      const ids = Array.from({ length: 100 }, (_, i) => round * 100 + i);
      const taken = await Promise.all(ids.map((i) => store.claim('s', [`event:${i}`], now, now + 600_000)));
      expect(taken.every(Boolean)).toBe(true);
    }
    expect(store.size).toBe(100);
    await store.close();
    const lines = (await fs.readFile(file, 'utf8')).split('\n').filter(Boolean);
    expect(lines.length).toBeLessThanOrEqual(1100);
    const reopened = await FileReplayStore.open(dir, { maxEntries: 100, now: () => now });
    expect(reopened.size).toBe(100);
    expect(await reopened.claim('s', ['event:2999'], now, now + 600_000)).toBe(false);
    expect(await reopened.claim('s', ['event:0'], now, now + 600_000)).toBe(true);
    await reopened.close();
  });

  it('reads past a line torn by a crash, and drops what expired while the host was down', async () => {
    const store = await FileReplayStore.open(dir, { now: () => NOW });
    await store.claim('s', ['event:short'], NOW, NOW + 1000);
    await store.claim('s', ['event:long'], NOW, NOW + 600_000);
    await store.close();
    await fs.appendFile(join(dir, REPLAY_FILE_NAME), '{"k":"s\\nevent:torn","x":17');
    const reopened = await FileReplayStore.open(dir, { now: () => NOW + 5000 });
    expect(reopened.size).toBe(1);
    expect(await reopened.claim('s', ['event:long'], NOW + 5000, NOW + 605_000)).toBe(false);
    expect(await reopened.claim('s', ['event:short'], NOW + 5000, NOW + 605_000)).toBe(true);
    await reopened.close();
  });

  it('does not take a claim it could not write, so the platform can push it again', async () => {
    const store = await FileReplayStore.open(dir, { now: () => NOW });
    await fs.rm(dir, { recursive: true, force: true });
    await fs.writeFile(dir, 'not a directory');
    await store.close();
    await expect(store.claim('s', ['event:a'], NOW, NOW + 1000)).rejects.toThrow();
    await fs.rm(dir, { force: true });
    await fs.mkdir(dir);
    expect(await store.claim('s', ['event:a'], NOW, NOW + 1000)).toBe(true);
    await store.close();
  });
});
