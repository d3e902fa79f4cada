import { spawn, spawnSync, type SpawnOptions } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A PostgreSQL server of its own for a test run: a fresh cluster in a temporary directory on a free loopback port. */
export interface TestPostgres {
  /** `postgres://host@127.0.0.1:<port>/postgres`. */
  readonly url: string;
  readonly port: number;
  /** A URL of a new, empty database of this server (a test's own). */
  createDatabase(name?: string): Promise<string>;
  /**
   * Stops the server and keeps its data (`fast`: as `pg_ctl stop -m fast`,
   * a planned restart; `immediate`: as a crash); `start` brings it back on
   * the same port.
   */
  halt(mode?: 'fast' | 'immediate'): Promise<void>;
  /** Starts the server again after `halt`. */
  start(): Promise<void>;
  /** The server's log file (PostgreSQL's own messages: errors of statements, connections). */
  readonly logFile: string;
  /** Stops the server at once (as a crash would) and removes its directory. */
  stop(): Promise<void>;
}

/** Where the PostgreSQL server programs are: HOST_TEST_PG_BINDIR, Debian's /usr/lib/postgresql/<newest>/bin, or PATH. */
export function findPostgresBin(): string | undefined {
  const fromEnv = process.env['HOST_TEST_PG_BINDIR'];
  if (fromEnv && existsSync(join(fromEnv, 'initdb'))) return fromEnv;
  const debian = '/usr/lib/postgresql';
  if (existsSync(debian)) {
    const versions = readdirSync(debian)
      .filter((v) => existsSync(join(debian, v, 'bin', 'initdb')))
      .sort((a, b) => Number(b) - Number(a));
    if (versions[0]) return join(debian, versions[0], 'bin');
  }
  for (const dir of (process.env['PATH'] ?? '').split(':')) if (dir && existsSync(join(dir, 'initdb'))) return dir;
  return undefined;
}

/** PostgreSQL refuses to run as root: as root, the server runs as the `postgres` user (Debian's package makes it), else `nobody`. */
function serverUser(): { uid: number; gid: number } | undefined {
  if (typeof process.getuid !== 'function' || process.getuid() !== 0) return undefined;
  const passwd = readFileSync('/etc/passwd', 'utf8').split('\n');
  for (const name of ['postgres', 'nobody']) {
    const fields = passwd.find((l) => l.startsWith(`${name}:`))?.split(':');
    if (fields) return { uid: Number(fields[2]), gid: Number(fields[3]) };
  }
  throw new Error('Running as root, and there is neither a "postgres" nor a "nobody" user to run the test PostgreSQL server as.');
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.unref();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

function run(cmd: string, args: string[], options: SpawnOptions): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { ...options, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout!.on('data', (d: Buffer) => (output = (output + d.toString()).slice(-4000)));
    child.stderr!.on('data', (d: Buffer) => (output = (output + d.toString()).slice(-4000)));
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`${cmd} ${args.join(' ')} exited with ${code}: ${output}`))));
  });
}

/**
 * Starts a throwaway PostgreSQL server: `initdb` into a new temporary
 * directory, `pg_ctl start` on a free loopback port (trust authentication,
 * no fsync: test data only). When run as root, the cluster belongs to and
 * runs as the `postgres` user. `.ci/run` installs Debian's postgresql.
 */
export async function startTestPostgres(): Promise<TestPostgres> {
  const bin = findPostgresBin();
  if (!bin) {
    throw new Error(
      'No PostgreSQL server programs (initdb, pg_ctl) were found: install Debian\'s "postgresql" package (.ci/run does), ' +
        'or set HOST_TEST_PG_BINDIR to the directory holding them.',
    );
  }
  const user = serverUser();
  const dir = mkdtempSync(join(tmpdir(), 'host-pg-'));
  if (user) chownSync(dir, user.uid, user.gid);
  const data = join(dir, 'data');
  const options: SpawnOptions = { cwd: dir, env: { ...process.env, LC_ALL: 'C' }, ...(user ?? {}) };
  const pgCtl = join(bin, 'pg_ctl');
  let started = false;
  const stopNow = () => {
    if (started) spawnSync(pgCtl, ['stop', '-D', data, '-m', 'immediate', '-w'], { ...options, stdio: 'ignore' });
    started = false;
    rmSync(dir, { recursive: true, force: true });
  };
  process.once('exit', stopNow);
  try {
    await run(join(bin, 'initdb'), ['-D', data, '-U', 'host', '--auth=trust', '-E', 'UTF8', '--no-sync', '--no-instructions'], options);
    const port = await freePort();
    const serverOptions = `-p ${port} -c listen_addresses=127.0.0.1 -c unix_socket_directories=${dir} -c fsync=off -c max_connections=200`;
    const logFile = join(dir, 'server.log');
    const start = () => run(pgCtl, ['start', '-D', data, '-w', '-t', '60', '-l', logFile, '-o', serverOptions], options);
    await start();
    started = true;
    const url = `postgres://host@127.0.0.1:${port}/postgres`;
    let databases = 0;
    return {
      url,
      port,
      logFile,
      async halt(mode = 'fast') {
        await run(pgCtl, ['stop', '-D', data, '-m', mode, '-w', '-t', '60'], options);
        started = false;
      },
      async start() {
        await start();
        started = true;
      },
      async createDatabase(name = `test_${++databases}`) {
        const { Client } = await import('pg');
        const c = new Client({ connectionString: url });
        await c.connect();
        try {
          await c.query(`CREATE DATABASE "${name.replace(/"/g, '""')}"`);
        } finally {
          await c.end();
        }
        return `postgres://host@127.0.0.1:${port}/${encodeURIComponent(name)}`;
      },
      async stop() {
        process.removeListener('exit', stopNow);
        stopNow();
      },
    };
  } catch (e) {
    process.removeListener('exit', stopNow);
    stopNow();
    throw e;
  }
}
