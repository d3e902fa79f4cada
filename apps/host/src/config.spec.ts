import { DEFAULT_CONFIG, parseConfig } from './config';

describe('parseConfig', () => {
  it('starts from the embedded defaults', () => {
    expect(parseConfig([], {})).toEqual({ ok: true, config: { ...DEFAULT_CONFIG, resetAdminToken: false } });
  });

  it('takes environment variables, and flags over them', () => {
    const env = {
      HOST_BIND: '0.0.0.0',
      HOST_PORT: '9000',
      HOST_DATA_DIR: '/srv/host',
      HOST_MAX_UPLOAD_BYTES: '1048576',
      HOST_ADMIN_TOKEN: 'x'.repeat(20),
    };
    const r = parseConfig(['--port', '9100', '--data-dir=/var/host', '--reset-admin-token'], env);
    expect(r).toEqual({
      ok: true,
      config: {
        bind: '0.0.0.0',
        port: 9100,
        dataDir: '/var/host',
        maxUploadBytes: 1048576,
        adminToken: 'x'.repeat(20),
        resetAdminToken: true,
        store: 'file',
      },
    });
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
        expect.stringMatching(/^HOST_ADMIN_TOKEN must be at least 16 characters/),
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
      errors: ['--store must be "file" (the only store so far; leave it unset for the default) (got "postgres")'],
    });
    expect(parseConfig([], { HOST_STORE: 'sqlite' })).toMatchObject({
      ok: false,
      errors: [expect.stringMatching(/^HOST_STORE must be "file"/)],
    });
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
