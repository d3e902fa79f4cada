import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { addressPolicyOf, DEFAULT_CONFIG, isolationOf, metricsListenOf, parseConfig, readAdminTokenFile, type HostConfig } from './config';

describe('parseConfig', () => {
  it('serves /metrics on the main listener by default, on an address of its own, or not at all', () => {
    const listen = (env: Record<string, string>, argv: string[] = []) => {
      const r = parseConfig(argv, env);
      if (r.ok !== true) throw new Error(JSON.stringify(r));
      return metricsListenOf(r.config as HostConfig);
    };
    expect(listen({})).toEqual({ kind: 'admin' });
    expect(listen({ HOST_METRICS_BIND: 'off' })).toEqual({ kind: 'off' });
    expect(listen({ HOST_METRICS_BIND: '10.0.0.5:9464' })).toEqual({ kind: 'bind', host: '10.0.0.5', port: 9464 });
    expect(listen({}, ['--metrics-bind', '[::1]:9100'])).toEqual({ kind: 'bind', host: '::1', port: 9100 });
    for (const bad of ['9464', 'localhost', '127.0.0.1:99999', 'on', '127.0.0.1:']) {
      expect(parseConfig([], { HOST_METRICS_BIND: bad })).toEqual({
        ok: false,
        errors: [expect.stringMatching(/^HOST_METRICS_BIND must be "off" or ADDRESS:PORT/)],
      });
    }
  });

  it('takes the log format, text or json', () => {
    expect(parseConfig(['--log-format', 'json'], {})).toMatchObject({ ok: true, config: { logFormat: 'json' } });
    expect(parseConfig([], { HOST_LOG_FORMAT: 'yaml' })).toEqual({
      ok: false,
      errors: ['HOST_LOG_FORMAT must be "text" or "json" (got "yaml")'],
    });
  });

  it('starts from the embedded defaults', () => {
    expect(parseConfig([], {})).toEqual({ ok: true, config: { ...DEFAULT_CONFIG, resetAdminToken: false } });
    // The embedded SQL store unless HOST_STORE says otherwise.
    expect(DEFAULT_CONFIG.store).toBe('sql');
  });

  it('takes environment variables, and flags over them', () => {
    const env = {
      HOST_BIND: '0.0.0.0',
      HOST_PORT: '9000',
      HOST_DATA_DIR: '/srv/host',
      HOST_MAX_UPLOAD_BYTES: '1048576',
      HOST_ADMIN_TOKEN_FILE: '/run/secrets/host-admin-token',
    };
    const r = parseConfig(['--port', '9100', '--data-dir=/var/host', '--reset-admin-token'], env);
    expect(r).toEqual({
      ok: true,
      config: {
        bind: '0.0.0.0',
        port: 9100,
        dataDir: '/var/host',
        maxUploadBytes: 1048576,
        maxWaitingEvents: 10000,
        adminTokenFile: '/run/secrets/host-admin-token',
        resetAdminToken: true,
        store: 'sql',
        pluginIsolation: 'auto',
        pluginUidRange: '200000-265535',
        pluginNetwork: 'any',
        pluginMemoryMb: 512,
        pluginMaxProcesses: 128,
        pluginMaxOpenFiles: 1024,
        pluginCpuSeconds: 0,
        logFormat: 'text',
      },
    });
  });

  it('takes the plugin isolation settings and refuses a wrong mode, uid range or limit', () => {
    const r = parseConfig(['--plugin-isolation', 'own-user', '--plugin-network=none'], {
      HOST_PLUGIN_UID_RANGE: '300000-300009',
      HOST_PLUGIN_MEMORY_MB: '64',
    });
    expect(r).toEqual({ ok: true, config: expect.objectContaining({ pluginIsolation: 'own-user', pluginNetwork: 'none' }) });
    expect(r.ok === true && isolationOf(r.config)).toEqual({
      request: 'own-user',
      uidRange: { first: 300000, last: 300009 },
      network: 'none',
      limits: { memoryBytes: 64 * 1024 * 1024, processes: 128, openFiles: 1024, cpuSeconds: 0 },
    });
    expect(parseConfig([], { HOST_PLUGIN_ISOLATION: 'chroot', HOST_PLUGIN_UID_RANGE: '5-4', HOST_PLUGIN_MAX_PROCESSES: '-1' })).toEqual({
      ok: false,
      errors: [
        expect.stringMatching(/^HOST_PLUGIN_ISOLATION must be "auto", "sandbox", "own-user" or "same-user"/),
        expect.stringMatching(/^HOST_PLUGIN_UID_RANGE must be two uids FIRST-LAST/),
        expect.stringMatching(/^HOST_PLUGIN_MAX_PROCESSES must be from 0 to/),
      ],
    });
  });

  it('refuses --admin-token-file: a command line is readable by every process', () => {
    const r = parseConfig(['--admin-token-file', '/run/secrets/t'], {});
    expect(r).toEqual({
      ok: false,
      errors: expect.arrayContaining([expect.stringMatching(/^--admin-token-file is not accepted: .*HOST_ADMIN_TOKEN_FILE/)]),
    });
  });

  it('takes the bound of waiting events, refusing one below 1', () => {
    expect(parseConfig(['--max-waiting-events', '500'], {})).toEqual({
      ok: true,
      config: expect.objectContaining({ maxWaitingEvents: 500 }),
    });
    expect(parseConfig([], { HOST_MAX_WAITING_EVENTS: '0' })).toEqual({
      ok: false,
      errors: [expect.stringMatching(/^HOST_MAX_WAITING_EVENTS must be at least 1/)],
    });
  });

  it('takes the QQ Bot accounts file and the public address', () => {
    const r = parseConfig(['--public-url', 'https://bot.example.com'], { HOST_QQBOT_ACCOUNTS_FILE: '/etc/host/qqbot.json' });
    expect(r).toEqual({
      ok: true,
      config: expect.objectContaining({ qqbotAccountsFile: '/etc/host/qqbot.json', publicUrl: 'https://bot.example.com' }),
    });
    const bad = parseConfig([], { HOST_PUBLIC_URL: 'bot.example.com' });
    expect(bad).toEqual({ ok: false, errors: [expect.stringMatching(/^HOST_PUBLIC_URL must be an http or https URL/)] });
    const query = parseConfig(['--public-url', 'https://bot.example.com/?x=1'], {});
    expect(query).toEqual({ ok: false, errors: [expect.stringMatching(/^--public-url must not have a query or fragment/)] });
  });

  it('reports every problem, naming its source', () => {
    const r = parseConfig(['--port', 'eighty', '--colour', 'red', '--data-dir'], {
      HOST_MAX_UPLOAD_BYTES: '12',
      HOST_ADMIN_TOKEN: 'short',
    });
    expect(r.ok).toBe(false);
    const errors = (r as { errors: string[] }).errors;
    expect(errors).toEqual(
      expect.arrayContaining([
        'unknown option "--colour" (see --help)',
        '--data-dir needs a value',
        expect.stringMatching(/^--port must be a number \(got "eighty"\)$/),
        expect.stringMatching(/^HOST_MAX_UPLOAD_BYTES must be at least 1024 bytes/),
        expect.stringMatching(/^HOST_ADMIN_TOKEN is not accepted: .* set HOST_ADMIN_TOKEN_FILE instead/),
      ]),
    );
    expect(errors.join('\n')).not.toContain('short');
  });

  it('refuses a port out of range and an empty data dir from the environment', () => {
    const r = parseConfig(['--port=70000'], {});
    expect(r).toEqual({ ok: false, errors: ['--port must be from 0 to 65535 (got "70000")'] });
    expect(parseConfig(['--help'], {})).toEqual({ ok: 'help' });
  });

  it('takes HOST_STORE=file and refuses a store it does not have, saying what to use', () => {
    expect(parseConfig([], { HOST_STORE: 'file' })).toMatchObject({ ok: true, config: { store: 'file' } });
    expect(parseConfig(['--store', 'postgres'], {})).toEqual({
      ok: false,
      errors: ['--store must be "file" or "sql" (leave it unset for the default) (got "postgres")'],
    });
    expect(parseConfig([], { HOST_STORE: 'sqlite' })).toMatchObject({
      ok: false,
      errors: [expect.stringMatching(/^HOST_STORE must be "file"/)],
    });
  });

  it('takes the sql store, embedded or on the PostgreSQL server a database URL names', () => {
    expect(parseConfig(['--store', 'sql'], {})).toMatchObject({ ok: true, config: { store: 'sql' } });
    const url = 'postgres://host@db.example.com:5432/host';
    expect(parseConfig([], { HOST_DATABASE_URL: url, HOST_DATABASE_PASSWORD_FILE: '/run/secrets/db' })).toMatchObject({
      ok: true,
      config: { store: 'sql', databaseUrl: url, databasePasswordFile: '/run/secrets/db' },
    });
    expect(parseConfig(['--key-file', '/etc/host/key', '--replica-name', 'host-2'], {})).toMatchObject({
      ok: true,
      config: { keyFile: '/etc/host/key', replicaName: 'host-2' },
    });
  });

  it('refuses a database URL with a password, of another scheme, or beside HOST_STORE=file', () => {
    const withPassword = parseConfig([], { HOST_DATABASE_URL: 'postgres://host:hunter2@db:5432/host' });
    expect(withPassword).toEqual({
      ok: false,
      errors: [expect.stringMatching(/^HOST_DATABASE_URL must not hold a password .* HOST_DATABASE_PASSWORD_FILE/)],
    });
    expect(JSON.stringify(withPassword)).not.toContain('hunter2');
    expect(parseConfig(['--database-url', 'mysql://db/host'], {})).toEqual({
      ok: false,
      errors: [expect.stringMatching(/^--database-url must be a postgres:\/\/ URL/)],
    });
    expect(parseConfig(['--store', 'file'], { HOST_DATABASE_URL: 'postgres://db/host' })).toEqual({
      ok: false,
      errors: ['--store is "file", but HOST_DATABASE_URL is set: a database URL needs the sql store'],
    });
    expect(parseConfig([], { HOST_DATABASE_PASSWORD_FILE: '/x' })).toEqual({
      ok: false,
      errors: ['HOST_DATABASE_PASSWORD_FILE is set without HOST_DATABASE_URL / --database-url'],
    });
    expect(parseConfig(['--replica-name', 'a b'], {})).toMatchObject({ ok: false });
  });
});

describe('parseConfig command line', () => {
  // [argv, the flag-derived settings or 'help', the errors]; environment empty.
  it.each<[string[], Record<string, unknown> | 'help', string[]]>([
    [
      ['--bind', '0.0.0.0', '--port=9', '--data-dir', 'd', '--max-upload-bytes', '2048'],
      { bind: '0.0.0.0', port: 9, dataDir: 'd', maxUploadBytes: 2048 },
      [],
    ],
    [['--port', '1', '--port', '2'], { port: 2 }, []],
    [['--port=--help'], {}, ['--port must be a number (got "--help")']],
    [['--data-dir', '-x'], { dataDir: '-x' }, []],
    [['--port', '-1'], {}, ['--port must be from 0 to 65535 (got "-1")']],
    [['--bind='], {}, ['--bind must not be empty (got "")', '--bind must be an IP address or host name (got "")']],
    [['--reset-admin-token'], { resetAdminToken: true }, []],
    [['--help'], 'help', []],
    [['-h'], 'help', []],
    [['--colour', '--help'], 'help', []],
    [['--port', '--help'], 'help', []],
    [['--port', '--bind', 'b'], {}, ['--port needs a value']],
    [['--port'], {}, ['--port needs a value']],
    [['--colour=red'], {}, ['unknown option "--colour=red" (see --help)']],
    [['--colour', 'red'], {}, ['unknown option "--colour" (see --help)', 'unknown option "red" (see --help)']],
    [['-p', '1'], {}, ['unknown option "-p" (see --help)', 'unknown option "1" (see --help)']],
    [['-xy'], {}, ['unknown option "-xy" (see --help)']],
    [['--help=1'], {}, ['unknown option "--help=1" (see --help)']],
    [['--reset-admin-token=yes'], {}, ['unknown option "--reset-admin-token=yes" (see --help)']],
    [['--', '--port', '9'], {}, ['unknown option "--" (see --help)']],
    [
      ['--adminToken', 'x'.repeat(20)],
      {},
      ['unknown option "--adminToken" (see --help)', `unknown option "${'x'.repeat(20)}" (see --help)`],
    ],
  ])('%j', (argv, settings, errors) => {
    const r = parseConfig(argv, {});
    if (settings === 'help') return expect(r).toEqual({ ok: 'help' });
    if (errors.length > 0) return expect(r).toEqual({ ok: false, errors });
    expect(r).toEqual({ ok: true, config: { ...DEFAULT_CONFIG, resetAdminToken: false, ...settings } });
  });

  it('takes HOST_RESET_ADMIN_TOKEN for --reset-admin-token, true or false only', () => {
    expect(parseConfig([], { HOST_RESET_ADMIN_TOKEN: 'true' })).toMatchObject({ ok: true, config: { resetAdminToken: true } });
    expect(parseConfig([], { HOST_RESET_ADMIN_TOKEN: 'false' })).toMatchObject({ ok: true, config: { resetAdminToken: false } });
    expect(parseConfig([], { HOST_RESET_ADMIN_TOKEN: '' })).toMatchObject({ ok: true, config: { resetAdminToken: false } });
    expect(parseConfig(['--reset-admin-token'], { HOST_RESET_ADMIN_TOKEN: 'false' })).toMatchObject({
      ok: true,
      config: { resetAdminToken: true },
    });
    expect(parseConfig([], { HOST_RESET_ADMIN_TOKEN: 'yes' })).toEqual({
      ok: false,
      errors: ['HOST_RESET_ADMIN_TOKEN must be true or false (got "yes")'],
    });
  });

  it('keeps a value after a flag that lacked one', () => {
    expect(parseConfig(['--port', '--bind', 'b', '--port', '7'], {})).toEqual({ ok: false, errors: ['--port needs a value'] });
    expect(parseConfig(['--port', '--bind', '', '--port', '7'], {})).toMatchObject({
      ok: false,
      errors: ['--port needs a value', '--bind must not be empty (got "")', expect.anything()],
    });
    expect(parseConfig(['--', '--port', '9', '--bind', ''], {})).toEqual({
      ok: false,
      errors: [
        'unknown option "--" (see --help)',
        '--bind must not be empty (got "")',
        '--bind must be an IP address or host name (got "")',
      ],
    });
  });
});

describe('readAdminTokenFile', () => {
  const dir = mkdtempSync(join(tmpdir(), 'host-token-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const file = (name: string, content: string, mode = 0o600) => {
    const f = join(dir, name);
    writeFileSync(f, content, { mode });
    chmodSync(f, mode);
    return f;
  };

  it('takes the content without the trailing line break', () => {
    expect(readAdminTokenFile(file('ok', 'a-long-enough-operator-token\n'))).toEqual({ ok: true, token: 'a-long-enough-operator-token' });
  });

  it('refuses a missing file and a short or multi-line token, without showing it', () => {
    expect(readAdminTokenFile(join(dir, 'missing'))).toMatchObject({
      ok: false,
      error: expect.stringMatching(/cannot be read \(ENOENT\)/),
    });
    const short = readAdminTokenFile(file('short', 'short\n'));
    expect(short).toMatchObject({ ok: false, error: expect.stringMatching(/at least 16 characters/) });
    expect(JSON.stringify(short)).not.toContain('"short"');
    expect(readAdminTokenFile(file('two', 'a-long-enough-token\nsecond-line\n'))).toMatchObject({ ok: false });
  });

  it('warns when other users can read it', () => {
    if (process.platform === 'win32') return;
    expect(readAdminTokenFile(file('open', 'a-long-enough-operator-token', 0o644))).toMatchObject({
      ok: true,
      warning: expect.stringMatching(/mode 644\); chmod 600 it/),
    });
  });
});

describe('addressPolicyOf', () => {
  const policy = (argv: string[], env: Record<string, string> = {}) => {
    const r = parseConfig(argv, env);
    if (r.ok !== true) throw new Error(JSON.stringify(r));
    return addressPolicyOf(r.config);
  };

  it('allows loopback plugins by default only to a host listening on loopback, and private ones only when set', () => {
    expect(policy([])).toEqual({ allowLoopback: true, allowPrivate: false });
    expect(policy(['--bind', '::1'])).toEqual({ allowLoopback: true, allowPrivate: false });
    expect(policy(['--bind', 'localhost'])).toEqual({ allowLoopback: true, allowPrivate: false });
    expect(policy(['--bind', '0.0.0.0'])).toEqual({ allowLoopback: false, allowPrivate: false });
    expect(policy(['--bind', '192.168.1.10'])).toEqual({ allowLoopback: false, allowPrivate: false });
  });

  it('takes the settings from the environment and the command line', () => {
    expect(policy(['--bind', '0.0.0.0', '--http-allow-loopback', 'true'], { HOST_HTTP_ALLOW_PRIVATE: 'true' })).toEqual({
      allowLoopback: true,
      allowPrivate: true,
    });
    expect(policy([], { HOST_HTTP_ALLOW_LOOPBACK: 'false' })).toEqual({ allowLoopback: false, allowPrivate: false });
    expect(parseConfig(['--http-allow-private', 'yes'], {})).toEqual({
      ok: false,
      errors: ['--http-allow-private must be "true" or "false" (got "yes")'],
    });
  });
});
