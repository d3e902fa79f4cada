#!/usr/bin/env node
// `npm start`: builds the host and its admin app and runs the host in the foreground.
// The package script is `exec node tools/scripts/start.mjs`, so the signal a
// service manager sends to npm reaches this process, which passes it on to
// the host; and if whoever started this process goes away without a signal
// (npm killed with SIGKILL), the host is stopped too rather than left behind.
import { spawnSync, spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';

const root = new URL('../..', import.meta.url).pathname;
if (!existsSync(`${root}apps/host/project.json`)) {
  console.error('The host application is not part of this checkout yet: nothing to start.');
  console.error('Run "npm test" to check the protocol library.');
  process.exit(1);
}
refuseFlagsNpmKept();

/**
 * npm reads the flags before `--` as settings of its own: `npm start --port 9000`
 * runs this script without them (npm only warns "Unknown cli config") and hands
 * them over as npm_config_* variables. A host flag found there stops the start
 * with the command that passes it on, instead of a host started without it.
 * The host's flags and their variables are those of apps/host/src/config.ts.
 */
function refuseFlagsNpmKept() {
  const config = readFileSync(`${root}apps/host/src/config.ts`, 'utf8');
  const flags = [...config.matchAll(/env: '(HOST_[A-Z_]+)', flag: '--([a-z-]+)'/g)].map(([, env, flag]) => ({ flag, env }));
  flags.push({ flag: 'reset-admin-token', env: 'HOST_RESET_ADMIN_TOKEN', boolean: true });
  const kept = flags.filter(({ flag }) => process.env[`npm_config_${flag.replaceAll('-', '_')}`] !== undefined);
  if (kept.length === 0) return;
  const words = kept.map(({ flag, boolean }) => {
    const value = process.env[`npm_config_${flag.replaceAll('-', '_')}`];
    return boolean ? `--${flag}` : `--${flag} ${value === 'true' || value === '' ? '<value>' : value}`;
  });
  const variables = kept.map(({ env, flag, boolean }) => {
    const value = process.env[`npm_config_${flag.replaceAll('-', '_')}`];
    return `${env}=${boolean ? 'true' : value === 'true' || value === '' ? '<value>' : value}`;
  });
  console.error(
    `npm start: npm took ${kept.map(({ flag }) => `--${flag}`).join(', ')} as settings of its own, so the host would not get them.`,
  );
  console.error(`Put the host's flags after "--":  npm start -- ${words.join(' ')}`);
  console.error(`or set their variables:          ${variables.join(' ')} npm start`);
  process.exit(2);
}
// The host and the admin app it serves at / (dist/apps/admin). What the build prints matters only when it fails:
// a start shows the host's own lines.
console.log('npm start: building the host and the admin app (npx nx run-many -t build -p host,admin)');
const build = spawnSync('npx', ['nx', 'run-many', '-t', 'build', '-p', 'host,admin', '--outputStyle=stream'], {
  cwd: root,
  stdio: ['ignore', 'pipe', 'pipe'],
  encoding: 'utf8',
  maxBuffer: 256 * 1024 * 1024,
});
if (build.status !== 0) {
  process.stdout.write(build.stdout ?? '');
  process.stderr.write(build.stderr ?? '');
  console.error(
    `npm start: the build failed (${build.error?.message ?? `exit code ${build.status ?? build.signal}`}); its output is above.`,
  );
  process.exit(build.status || 1);
}
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
