// A host process for the orphan test: starts the fixture plugin (a child
// that ignores stop and SIGTERM and has its own child), prints the pids and
// leaves through process.exit without stopping anything. The runtime's exit
// hook must take the plugin's whole process group with it.
import { createTestHost } from './harness';

async function main(): Promise<void> {
  const host = createTestHost();
  const id = host.install({ args: ['ignore-stop', '--spawn-child'] });
  const { pid } = await host.runtime.start(id);
  let child = 0;
  while (!child) {
    await new Promise((r) => setTimeout(r, 20));
    const lines = await host.logs.tail(id, 20);
    const m = lines.map((l) => /^child-pid=(\d+)$/.exec(l.message)).find(Boolean);
    if (m) child = Number(m[1]);
  }
  process.stdout.write(`${JSON.stringify({ pid, child, dataDir: host.paths.dataDir })}\n`);
  process.exit(0);
}

void main();
