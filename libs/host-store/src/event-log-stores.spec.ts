import { promises as fs, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EVENT_LOG_FILE_NAME, FileEventLogStore } from './file-event-log-store';
import { MemoryEventLogStore } from './memory-event-log-store';
import { contractDelivery, contractEvent, describeEventLogStoreContract } from './testing/event-log-store-contract';

describeEventLogStoreContract('MemoryEventLogStore', {
  open: async (capacity) => new MemoryEventLogStore({ capacity }),
});

let contractDir = '';
describeEventLogStoreContract('FileEventLogStore', {
  open: (capacity) => FileEventLogStore.open((contractDir = mkdtempSync(join(tmpdir(), 'events-contract-'))), { capacity }),
  reopen: (capacity) => FileEventLogStore.open(contractDir, { capacity }),
  cleanup: async () => rmSync(contractDir, { recursive: true, force: true }),
});

describe('FileEventLogStore', () => {
  let dir: string;
  const open: FileEventLogStore[] = [];
  const openStore = async (options: Parameters<typeof FileEventLogStore.open>[1] = {}) => {
    const s = await FileEventLogStore.open(dir, options);
    open.push(s);
    return s;
  };
  const lines = async () => (await fs.readFile(join(dir, EVENT_LOG_FILE_NAME), 'utf8')).split('\n').filter(Boolean);
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'events-'));
  });
  afterEach(async () => {
    for (const s of open.splice(0)) await s.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('keeps its records in <dir>/events.jsonl, readable only by the host user', async () => {
    const s = await openStore();
    s.append(contractEvent('a'));
    await s.flush();
    expect(s.file).toBe(join(dir, EVENT_LOG_FILE_NAME));
    expect((await lines()).map((l) => JSON.parse(l).op)).toEqual(['snapshot', 'event']);
    if (process.platform !== 'win32') expect((await fs.stat(s.file)).mode & 0o777).toBe(0o600);
  });

  it('writes one line per changed record per flush, however often it changed, and none for records already forgotten', async () => {
    const s = await openStore({ capacity: 2, flushIntervalMilliseconds: 60_000 });
    const a = contractEvent('a', ['com.example.one']);
    s.append(a);
    for (let i = 0; i < 10; i++) {
      a.replySequence = i;
      s.update(a);
    }
    for (let i = 0; i < 50; i++) s.append(contractEvent(`burst${i}`));
    await s.flush();
    expect((await lines()).slice(1).map((l) => JSON.parse(l).record.eventId)).toEqual(['burst48', 'burst49']);
    const b = s.get('burst49')!;
    b.completedAt = '2026-01-01T00:00:03.000Z';
    s.update(b);
    s.update(b);
    await s.flush();
    expect((await lines()).slice(3).map((l) => JSON.parse(l))).toEqual([{ op: 'update', record: b }]);
  });

  it('writes on its own after the flush interval', async () => {
    const s = await openStore({ flushIntervalMilliseconds: 10 });
    s.append(contractEvent('a'));
    for (let i = 0; i < 500 && (await lines()).length < 2; i++) await new Promise((r) => setTimeout(r, 10));
    expect(await lines()).toHaveLength(2);
  });

  it('stays bounded: once enough was appended, the file is rewritten as a snapshot of the kept records', async () => {
    const s = await openStore({ capacity: 5, maxAppendedBytes: 4096 });
    let largest = 0;
    for (let i = 0; i < 300; i++) {
      s.append(contractEvent(`e${i}`));
      await s.flush();
      largest = Math.max(largest, (await fs.stat(s.file)).size);
    }
    // A snapshot of 5 records (about 2 KiB) plus at most 4 KiB appended, plus the batch that crossed it.
    expect(largest).toBeLessThan(8192);
    await s.close();
    const again = await openStore({ capacity: 5 });
    expect(again.list().map((r) => r.eventId)).toEqual(['e299', 'e298', 'e297', 'e296', 'e295']);
  });

  it('skips a line torn by a crash and lines it cannot read, and removes temporary files of an interrupted rewrite', async () => {
    const good = contractEvent('good', ['com.example.one']);
    good.deliveries.push(contractDelivery('com.example.one', 'completed'));
    good.routedAt = good.completedAt = '2026-01-01T00:00:01.000Z';
    const text = [
      JSON.stringify({ op: 'snapshot', formatVersion: 1 }),
      JSON.stringify({ op: 'event', record: good }),
      JSON.stringify({ op: 'event', record: { eventId: 'no-shape' } }),
      JSON.stringify({ op: 'update', record: contractEvent('never-appended') }),
      'not json',
      JSON.stringify({ op: 'event', record: contractEvent('torn') }).slice(0, 40),
    ].join('\n');
    await fs.writeFile(join(dir, EVENT_LOG_FILE_NAME), text);
    await fs.writeFile(join(dir, `.${EVENT_LOG_FILE_NAME}.0123456789ab.tmp`), 'partial');
    const s = await openStore();
    expect(s.list().map((r) => r.eventId)).toEqual(['good']);
    expect(s.get('good')).toEqual(good);
    expect((await fs.readdir(dir)).sort()).toEqual([EVENT_LOG_FILE_NAME]);
    // The file was rewritten from what could be read.
    expect((await lines()).map((l) => JSON.parse(l).op)).toEqual(['snapshot', 'event']);
  });

  it('forgets everything before the last snapshot line', async () => {
    const text = [
      JSON.stringify({ op: 'event', record: contractEvent('old') }),
      JSON.stringify({ op: 'snapshot', formatVersion: 1 }),
      JSON.stringify({ op: 'event', record: contractEvent('new') }),
    ].join('\n');
    await fs.writeFile(join(dir, EVENT_LOG_FILE_NAME), text + '\n');
    expect((await openStore()).list().map((r) => r.eventId)).toEqual(['new']);
  });
});
