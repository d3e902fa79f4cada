#!/usr/bin/env node
// `npm start`: builds what the host needs and runs it in the foreground.
import { spawnSync, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';

const root = new URL('../..', import.meta.url).pathname;
if (!existsSync(`${root}apps/host/project.json`)) {
  console.error('The host application is not part of this checkout yet: nothing to start.');
  console.error('Run "npm test" to check the protocol library.');
  process.exit(1);
}
const build = spawnSync('npx', ['nx', 'run', 'host:build', '--outputStyle=stream'], { cwd: root, stdio: 'inherit' });
if (build.status !== 0) process.exit(build.status ?? 1);
const child = spawn(process.execPath, [`${root}dist/apps/host/main.cjs`, ...process.argv.slice(2)], { cwd: process.cwd(), stdio: 'inherit' });
for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => child.kill(sig));
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
