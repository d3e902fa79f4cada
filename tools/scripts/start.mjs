#!/usr/bin/env node
// `npm start`: builds the host and its admin app and runs the host in the foreground.
// The package script is `exec node tools/scripts/start.mjs`, so the signal a
// service manager sends to npm reaches this process, which passes it on to
// the host; and if whoever started this process goes away without a signal
// (npm killed with SIGKILL), the host is stopped too rather than left behind.
import { spawnSync, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';

const root = new URL('../..', import.meta.url).pathname;
if (!existsSync(`${root}apps/host/project.json`)) {
  console.error('The host application is not part of this checkout yet: nothing to start.');
  console.error('Run "npm test" to check the protocol library.');
  process.exit(1);
}
// The host and the admin app it serves at / (dist/apps/admin).
const build = spawnSync('npx', ['nx', 'run-many', '-t', 'build', '-p', 'host,admin', '--outputStyle=stream'], {
  cwd: root,
  stdio: 'inherit',
});
if (build.status !== 0) process.exit(build.status ?? 1);
const child = spawn(process.execPath, [`${root}dist/apps/host/main.cjs`, ...process.argv.slice(2)], {
  cwd: process.cwd(),
  stdio: 'inherit',
});
// Ctrl-C in a terminal sends SIGINT to the whole foreground process group: npm,
// this launcher and the host each get one, and npm passes its own on to this
// launcher as well. The host already has the terminal's; one more from here
// covers a signal sent to npm or this process alone (a service manager), and
// the copies that arrive within the same moment are dropped, so the host does
// not take them for a second Ctrl-C ("exit without waiting").
const REPEAT_GRACE_MILLISECONDS = 2000;
const lastForwarded = new Map();
for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'])
  process.on(sig, () => {
    const now = Date.now();
    const last = lastForwarded.get(sig);
    if (last !== undefined && now - last < REPEAT_GRACE_MILLISECONDS) return;
    lastForwarded.set(sig, now);
    child.kill(sig);
  });
const parent = process.ppid;
const orphanWatch = setInterval(() => {
  if (process.ppid !== parent) {
    console.error('npm start: the process that started the host is gone; stopping the host.');
    clearInterval(orphanWatch);
    child.kill('SIGTERM');
  }
}, 1000);
orphanWatch.unref();
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
