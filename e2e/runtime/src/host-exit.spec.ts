import { spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { processAlive, waitGone } from './harness';

const root = resolve(__dirname, '../../..');

// The host process exits without stopping its plugins (process.exit, a
// crash in host code): no plugin process may survive it.
it('kills every plugin process group when the host process exits', async () => {
  const host = spawn(process.execPath, [join(root, 'tools/scripts/ts-run.mjs'), join(__dirname, 'exit-host.ts')], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  host.stdout.on('data', (c: Buffer) => (out += c.toString()));
  const code = await new Promise<number | null>((r) => host.on('exit', r));
  expect(code).toBe(0);
  const { pid, child, dataDir } = JSON.parse(out.trim().split('\n').pop()!) as { pid: number; child: number; dataDir: string };
  rmSync(dataDir, { recursive: true, force: true });
  expect(await waitGone(pid)).toBe(true);
  expect(processAlive(child)).toBe(false);
});
