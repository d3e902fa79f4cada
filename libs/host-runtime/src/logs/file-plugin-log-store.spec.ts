import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { hostPaths, type LogLine } from '@host/host-core';
import { LIMITS } from '@host/protocol';
import { FilePluginLogStore } from './file-plugin-log-store';

describe('FilePluginLogStore', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'log-store-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const line = (message: string): LogLine => ({ at: new Date().toISOString(), stream: 'stderr', level: 'info', message });

  it('returns the newest lines in order', async () => {
    const store = new FilePluginLogStore(hostPaths(dir));
    for (let i = 0; i < 10; i++) store.append('com.a.b', line(`line ${i}`));
    const tail = await store.tail('com.a.b', 3);
    expect(tail.map((l) => l.message)).toEqual(['line 7', 'line 8', 'line 9']);
    expect(await store.tail('com.other.plugin', 3)).toEqual([]);
  });

  it('rotates by size and keeps a bounded number of files', async () => {
    const paths = hostPaths(dir);
    const store = new FilePluginLogStore(paths, { maxFileBytes: 2_000, maxFiles: 3 });
    for (let i = 0; i < 200; i++) {
      store.append('com.a.b', line(`line ${i} ${'.'.repeat(40)}`));
      if (i % 10 === 0) await store.flush();
    }
    await store.flush();
    const files = readdirSync(paths.logDirOf('com.a.b')).sort();
    expect(files).toEqual(['plugin.log', 'plugin.log.1', 'plugin.log.2']);
    for (const f of files) expect(statSync(join(paths.logDirOf('com.a.b'), f)).size).toBeLessThanOrEqual(2_000 + 1_000);
    const tail = await store.tail('com.a.b', 1000);
    expect(tail[tail.length - 1]!.message).toMatch(/^line 199 /);
    expect(tail.length).toBeLessThan(200);
  });

  it('drops lines it cannot write in time and says how many', async () => {
    const store = new FilePluginLogStore(hostPaths(dir), { maxPendingBytes: 1_000 });
    for (let i = 0; i < 100; i++) store.append('com.a.b', line(`flood ${i}`));
    const tail = await store.tail('com.a.b', 1000);
    const marker = tail[tail.length - 1]!;
    expect(marker).toMatchObject({ stream: 'host', level: 'warn' });
    expect(marker.message).toMatch(/^\d+ log lines dropped/);
    expect(Number(marker.message.split(' ')[0]) + tail.length - 1).toBe(100);
  });

  it("finds an event's lines across rotated files, newest last, at most the number asked for", async () => {
    const paths = hostPaths(dir);
    const store = new FilePluginLogStore(paths, { maxFileBytes: 2_000, maxFiles: 3 });
    const ofEvent = (message: string, eventId: string): LogLine => ({ ...line(message), stream: 'log', eventId, fields: { n: 1 } });
    store.append('com.a.b', ofEvent('first of e-1', 'e-1'));
    // Enough other lines to push the first one into a rotated file.
    for (let i = 0; i < 30; i++) {
      store.append('com.a.b', i === 15 ? ofEvent('second of e-1', 'e-1') : line(`noise ${i} "eventId":"e-1" ${'.'.repeat(40)}`));
      await store.flush();
    }
    store.append('com.a.b', ofEvent('of e-2', 'e-2'));
    store.append('com.a.b', ofEvent('third of e-1', 'e-1'));
    expect(readdirSync(paths.logDirOf('com.a.b')).length).toBeGreaterThan(1);
    const all = await store.linesOfEvent('com.a.b', 'e-1', 10);
    expect(all.map((l) => l.message)).toEqual(['first of e-1', 'second of e-1', 'third of e-1']);
    expect(all[0]).toMatchObject({ stream: 'log', eventId: 'e-1', fields: { n: 1 } });
    expect((await store.linesOfEvent('com.a.b', 'e-1', 2)).map((l) => l.message)).toEqual(['second of e-1', 'third of e-1']);
    expect(await store.linesOfEvent('com.a.b', 'e-9', 10)).toEqual([]);
    expect(await store.linesOfEvent('com.other.plugin', 'e-1', 10)).toEqual([]);
  });

  it('keeps fields apart while the line fits, and as text at the end of a capped message when it does not', async () => {
    const store = new FilePluginLogStore(hostPaths(dir));
    store.append('com.a.b', { ...line('small'), fields: { k: 'v' } });
    store.append('com.a.b', { ...line('big'), fields: { k: 'v'.repeat(LIMITS.maxLogLineChars) } });
    const [small, big] = await store.tail('com.a.b', 2);
    expect(small).toMatchObject({ message: 'small', fields: { k: 'v' } });
    expect(big!.fields).toBeUndefined();
    expect(big!.message).toHaveLength(LIMITS.maxLogLineChars);
    expect(big!.message.startsWith('big {"k":"vvv')).toBe(true);
  });

  it('caps long lines and tells subscribers', async () => {
    const store = new FilePluginLogStore(hostPaths(dir));
    const seen: string[] = [];
    const off = store.subscribe((_id, l) => seen.push(l.message));
    store.append('com.a.b', line('q'.repeat(LIMITS.maxLogLineChars * 2)));
    off();
    store.append('com.a.b', line('after'));
    expect(seen).toHaveLength(1);
    const [first, second] = await store.tail('com.a.b', 2);
    expect(first!.message).toHaveLength(LIMITS.maxLogLineChars);
    expect(second!.message).toBe('after');
  });
});
