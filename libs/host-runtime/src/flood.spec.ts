import { spawn } from 'node:child_process';
import { join, resolve } from 'node:path';

// A plugin that writes log.write requests as fast as it can and never reads
// its stdin, next to a well-behaved one, in a host process with a small heap
// (src/flood-host.spec-helper.ts). Without bounds the host buffers the
// requests and its answers until it runs out of memory within seconds.
const root = resolve(__dirname, '../../..');
const HEAP_MB = 96;

interface FloodReport {
  events: number;
  answered: number;
  maxHeapBytes: number;
  flood: { crashCount: number; lastError?: string };
  floodLog: string[];
}

async function runFloodHost(): Promise<{ code: number | null; report: FloodReport | null; stderr: string }> {
  const child = spawn(
    process.execPath,
    [
      `--max-old-space-size=${HEAP_MB}`,
      join(root, 'tools/scripts/ts-run.mjs'),
      join(__dirname, 'flood-host.spec-helper.ts'),
      join(__dirname, '..', 'test-fixtures'),
    ],
    { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let out = '';
  let err = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr.on('data', (c: Buffer) => (err = (err + c.toString()).slice(-4000)));
  const code = await new Promise<number | null>((r) => child.on('exit', r));
  const last = out.trim().split('\n').pop();
  return { code, report: last ? (JSON.parse(last) as FloodReport) : null, stderr: err };
}

it('stays within a small heap while a plugin floods log.write without reading, and other plugins are answered', async () => {
  const { code, report, stderr } = await runFloodHost();
  expect({ code, stderr: code === 0 ? '' : stderr }).toEqual({ code: 0, stderr: '' });
  const r = report!;
  // Every event to the well-behaved plugin was acknowledged and completed.
  expect(r.answered).toBe(r.events);
  expect(r.maxHeapBytes).toBeLessThan(64 * 1024 * 1024);
  // The flooder was stopped for not reading its answers, and its log says so once per run.
  expect(r.flood.crashCount).toBeGreaterThanOrEqual(1);
  expect(r.flood.lastError).toMatch(/^does not read its stdin: .* the host stopped it$/);
  // log.write over the rate: dropped, with a summary line instead of each line.
  expect(r.floodLog.some((l) => /^\d+ log lines dropped: the plugin logs faster than 500 lines per second/.test(l))).toBe(true);
  expect(r.floodLog.filter((l) => l.startsWith('Processing message queue failed'))).toEqual([]);
}, 120_000);
