// Benchmark (not a test): the metrics' own cost per event, apart from the machine's noise that the
// console-path benchmark (metrics-bench.ts) measures through. One process, a real Dispatcher and event log,
// a plugin in the process that takes each event at once; events dispatched one after another, with and
// without the metrics' taps (event log, default metrics), in alternating rounds. Reports the host's CPU per
// event with each and what the taps add.
//
//   npx nx run e2e-observability:bench-taps   (--rounds N, --events N)
import { answeredDelivery, type PluginEndpoint } from '@host/host-core';
import { ConsoleProvider } from '@host/host-console';
import { Dispatcher } from '@host/host-dispatch';
import { HostMetrics } from '@host/host-metrics';

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
}
const ROUNDS = arg('rounds', 6);
const EVENTS = arg('events', 20_000);

const plugin: PluginEndpoint = {
  pluginId: 'com.example.taps',
  transport: 'http',
  routing: () => ({
    pluginId: 'com.example.taps',
    eventSubscriptions: [{ eventType: 'message.created' }],
    canIntercept: false,
    permissions: [],
    commands: [],
  }),
  isAvailable: () => true,
  deliver: () =>
    answeredDelivery(Promise.resolve({ pluginId: 'com.example.taps', accepted: true, intercepted: false, error: null, durationMs: 1 })),
};

/** A dispatcher as the host has it (the failure log subscribes to its event log either way), with or without metrics. */
function dispatcher(withMetrics: boolean): { d: Dispatcher; provider: ConsoleProvider } {
  const provider = new ConsoleProvider();
  const d = new Dispatcher({ endpoints: () => [plugin] });
  d.providers.register(provider);
  d.events.subscribe(() => undefined);
  if (withMetrics) new HostMetrics().observeEventLog(d.events);
  return { d, provider };
}

/** CPU microseconds per event of `n` events, each routed and completed before the next. */
async function round(side: { d: Dispatcher; provider: ConsoleProvider }, n: number): Promise<number> {
  const before = process.cpuUsage();
  for (let i = 0; i < n; i++) {
    const r = await side.d.dispatch(
      side.provider.createEvent({ conversation: { type: 'group', id: 'g' }, sender: { id: 'u' }, text: 'hi' }),
    );
    await side.d.whenCompleted(r.eventId);
  }
  const used = process.cpuUsage(before);
  return (used.user + used.system) / n;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)]!;

async function main(): Promise<void> {
  const off = dispatcher(false);
  const on = dispatcher(true);
  await round(off, EVENTS / 4);
  await round(on, EVENTS / 4);
  const cost = { on: [] as number[], off: [] as number[] };
  for (let i = 0; i < ROUNDS; i++) {
    const first = i % 2 === 0;
    const a = await round(first ? on : off, EVENTS);
    const b = await round(first ? off : on, EVENTS);
    cost.on.push(first ? a : b);
    cost.off.push(first ? b : a);
    console.log(`round ${i + 1}: with the taps ${cost.on.at(-1)!.toFixed(1)} µs CPU an event, without ${cost.off.at(-1)!.toFixed(1)} µs`);
  }
  const added = median(cost.on) - median(cost.off);
  console.log(
    `\ndispatch of one event to one plugin in the process (median of ${ROUNDS} rounds of ${EVENTS}):\n` +
      `  without metrics: ${median(cost.off).toFixed(1)} µs CPU an event\n` +
      `  with the taps:   ${median(cost.on).toFixed(1)} µs CPU an event (+${added.toFixed(1)} µs)`,
  );
}

void main();
