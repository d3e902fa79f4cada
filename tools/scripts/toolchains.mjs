// What `npm test` needs beyond Node.js and npm, found the way the tests find it, with the Debian package that
// provides each. `npm test` stops at once when one is missing and prints the command that installs them all
// (tools/scripts/provision.sh, which .ci/run runs too). HOST_TOOLCHAIN_ROOT puts the fixed folders the probes
// look in under another root (default /), so the check itself can be tested on a machine that has them.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

/** Whether `cmd args` runs and exits 0 with this PATH. */
function runs(cmd, args, env) {
  return spawnSync(cmd, args, { env, stdio: 'ignore', timeout: 20_000 }).status === 0;
}

/** The Go 1.23+ binaries: Debian's /usr/lib/go-1.NN (what libs/plugin-sdk-go/toolchain finds) or go on the PATH. */
function hasGo(root, env) {
  const lib = join(root, 'usr/lib');
  const debian = existsSync(lib)
    ? readdirSync(lib).some((d) => /^go-1\.\d+$/.test(d) && Number(d.slice(5)) >= 23 && existsSync(join(lib, d, 'bin/go')))
    : false;
  if (debian) return true;
  const r = spawnSync('go', ['version'], { env, encoding: 'utf8', timeout: 20_000 });
  const m = /go1\.(\d+)/.exec(r.stdout ?? '');
  return r.status === 0 && m !== null && Number(m[1]) >= 23;
}

function hasPostgres(root, env) {
  const lib = join(root, 'usr/lib/postgresql');
  if (existsSync(lib) && readdirSync(lib).some((v) => existsSync(join(lib, v, 'bin/initdb')))) return true;
  return runs('initdb', ['--version'], env);
}

/** The missing ones: what each is for, and its Debian package. */
export function missingToolchains(env = process.env) {
  const root = env.HOST_TOOLCHAIN_ROOT || '/';
  const probes = [
    { what: 'curl (the guides run it)', apt: 'curl', ok: () => runs('curl', ['--version'], env) },
    { what: 'unzip', apt: 'unzip', ok: () => runs('unzip', ['-v'], env) },
    { what: 'zip', apt: 'zip', ok: () => runs('zip', ['-v'], env) },
    { what: 'openssl', apt: 'openssl', ok: () => runs('openssl', ['version'], env) },
    {
      what: "Debian's Chromium (the admin app's browser tests)",
      apt: 'chromium',
      ok: () => existsSync(join(root, 'usr/lib/chromium/chromium')),
    },
    { what: 'pip (the Python packer)', apt: 'python3-pip', ok: () => runs('python3', ['-m', 'pip', '--version'], env) },
    {
      what: 'venv (installs the Python SDK wheel in a test)',
      apt: 'python3-venv',
      ok: () => runs('python3', ['-c', 'import ensurepip, venv'], env),
    },
    {
      what: 'mypy (the Python SDK type check)',
      apt: 'python3-mypy',
      ok: () => runs('python3', ['-m', 'mypy', '--version'], env) || runs(join(root, 'usr/bin/python3'), ['-m', 'mypy', '--version'], env),
    },
    { what: 'bubblewrap (the plugin sandbox)', apt: 'bubblewrap', ok: () => runs('bwrap', ['--version'], env) },
    { what: 'PostgreSQL server programs (the SQL store tests)', apt: 'postgresql', ok: () => hasPostgres(root, env) },
    { what: 'Go 1.23 or newer (the Go SDK)', apt: 'golang-1.23-go (bookworm-backports)', ok: () => hasGo(root, env) },
  ];
  return probes.filter((p) => !p.ok()).map(({ what, apt }) => ({ what, apt }));
}

/** The lines `npm test` prints before it stops, or none when nothing is missing. */
export function missingToolchainsReport(missing) {
  if (missing.length === 0) return [];
  const sudo = process.getuid?.() === 0 ? '' : 'sudo ';
  return [
    'npm test needs programs this machine does not have:',
    ...missing.map((m) => `  ${m.what}: Debian package ${m.apt}`),
    `Install them (Debian, with apt-get) and run npm test again:`,
    `  ${sudo}bash tools/scripts/provision.sh`,
  ];
}
