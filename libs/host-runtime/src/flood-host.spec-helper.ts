// A host process for the flood test (run through tools/scripts/ts-run.mjs,
// with a small heap): one plugin floods log.write without reading its stdin,
// another answers events. It delivers events to the second one while the
// first floods, samples the heap, and prints what it saw as one JSON line.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { hostPaths } from '@host/host-core';
import { Dispatcher } from '@host/host-dispatch';
import { fixtureEvent, installFixturePlugin } from './fixture-records.spec-helper';
import { FilePluginLogStore } from './logs/file-plugin-log-store';
import { StdioPluginRuntime } from './stdio-runtime';

const FIXTURES = resolve(process.argv[2] ?? join(__dirname, '..', 'test-fixtures'));
/** Events delivered at least, one every 100 ms, and at most while waiting for the flooder to be stopped. */
const MIN_EVENTS = Number(process.argv[3] ?? 40);
const MAX_EVENTS = MIN_EVENTS * 5;
/** The runtime's limit on unread bytes; small, so the flooder is stopped early in the run. */
const MAX_UNREAD_BYTES = Number(process.argv[4] ?? 2 * 1024 * 1024);
const FLOOD = 'com.test.flood';
const ACK = 'com.test.ack';

const record = (dir: string, pluginId: string, fixture: string, args: string[]) =>
  installFixturePlugin({ dataDir: dir, pluginId, script: join(FIXTURES, fixture), args });
const event = fixtureEvent;

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'flood-host-'));
  const records = new Map([
    [FLOOD, record(dir, FLOOD, 'flood-plugin.mjs', [])],
    [ACK, record(dir, ACK, 'helper-plugin.mjs', ['ack'])],
  ]);
  const logs = new FilePluginLogStore(hostPaths(dir));
  const runtime = new StdioPluginRuntime({
    paths: hostPaths(dir),
    records: { get: async (id) => records.get(id) },
    logs,
    sink: { send: () => Promise.reject(new Error('not used')) },
    limits: { maxUnreadBytes: MAX_UNREAD_BYTES },
    timings: {
      pingIntervalMilliseconds: 0,
      restartBaseDelayMilliseconds: 200,
      restartMaxDelayMilliseconds: 400,
      stopGraceMilliseconds: 500,
      killAfterMilliseconds: 200,
    },
  });
  // Events go to the well-behaved plugin only; the flooder never reads them.
  const dispatcher = new Dispatcher({
    endpoints: () => runtime.endpoints().filter((e) => e.routing().pluginId === ACK),
    requestTimeoutMilliseconds: 5000,
  });
  const floodLog: string[] = [];
  logs.subscribe((id, line) => {
    if (id === FLOOD && line.stream === 'host') floodLog.push(line.message);
  });
  let maxHeap = 0;
  const sampler = setInterval(() => (maxHeap = Math.max(maxHeap, process.memoryUsage().heapUsed)), 20);
  await runtime.start(ACK);
  await runtime.start(FLOOD);
  let answered = 0;
  let n = 0;
  while (n < MIN_EVENTS || (n < MAX_EVENTS && (runtime.status(FLOOD)?.crashCount ?? 0) === 0)) {
    n++;
    await new Promise((r) => setTimeout(r, 100));
    const dispatched = await dispatcher.dispatch(event(n));
    const done = await dispatcher.whenCompleted(dispatched.eventId);
    if (done?.deliveries[0]?.state === 'completed') answered++;
  }
  clearInterval(sampler);
  const flood = runtime.status(FLOOD);
  await runtime.dispose();
  rmSync(dir, { recursive: true, force: true });
  process.stdout.write(`${JSON.stringify({ events: n, answered, maxHeapBytes: maxHeap, flood, floodLog })}\n`);
}

main().then(
  () => process.exit(0),
  (e: unknown) => {
    console.error(e);
    process.exit(1);
  },
);
