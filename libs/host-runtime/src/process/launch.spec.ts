import { join, resolve } from 'node:path';
import { StdioLaunchSchema } from '@host/protocol';
import { buildEnvironment, resolveLaunch } from './launch';

const dirs = { pluginDirectory: '/p', pluginDataDirectory: '/d', pluginConfigDirectory: '/c', pluginCacheDirectory: '/k' };

describe('buildEnvironment', () => {
  const host = {
    PATH: '/bin',
    HOME: '/home/h',
    LANG: 'C.UTF-8',
    HOST_ADMIN_TOKEN: 'secret',
    DATABASE_URL: 'postgres://x',
    AWS_SECRET_ACCESS_KEY: 'k',
  };

  it('passes the allow-list, the manifest environment and the plugin variables, and nothing else', () => {
    const env = buildEnvironment(host, { GREETING: 'hi', HOST_PLUGIN_ID: 'forged' }, 'com.a.b', dirs, 'linux');
    expect(env).toEqual({
      PATH: '/bin',
      HOME: '/home/h',
      LANG: 'C.UTF-8',
      GREETING: 'hi',
      HOST_PLUGIN_ID: 'com.a.b',
      HOST_PLUGIN_DIR: '/p',
      HOST_PLUGIN_DATA_DIR: '/d',
      HOST_PLUGIN_CONFIG_DIR: '/c',
      HOST_PLUGIN_CACHE_DIR: '/k',
    });
  });

  it('finds Windows variables whatever their case', () => {
    const env = buildEnvironment(
      { Path: 'C:\\bin', SystemRoot: 'C:\\Windows', ComSpec: 'cmd.exe', HOST_ADMIN_TOKEN: 's' },
      {},
      'com.a.b',
      dirs,
      'win32',
    );
    expect(env).toMatchObject({ PATH: 'C:\\bin', SYSTEMROOT: 'C:\\Windows', COMSPEC: 'cmd.exe' });
    expect(env['HOST_ADMIN_TOKEN']).toBeUndefined();
  });
});

describe('resolveLaunch', () => {
  const pkg = resolve('/data/plugins-v2/com.a.b');
  const launch = (over: object) => resolveLaunch(pkg, StdioLaunchSchema.parse({ command: 'node', ...over }));

  it('keeps bare commands for PATH lookup and resolves relative ones in the working directory', () => {
    expect(launch({ args: ['main.js', '--host-stdio'] })).toEqual({
      ok: true,
      command: 'node',
      args: ['main.js', '--host-stdio'],
      cwd: pkg,
    });
    // Relative commands resolve against workingDirectory, as the spec and the installer's entry check say.
    expect(launch({ command: './plugin', workingDirectory: 'bin' })).toMatchObject({
      command: join(pkg, 'bin/plugin'),
      cwd: join(pkg, 'bin'),
    });
  });

  it.each(['..', '../other', '/etc', 'bin/../../x'])('refuses workingDirectory %j', (workingDirectory) => {
    expect(launch({ workingDirectory })).toMatchObject({ ok: false, problem: { code: 'PLUGIN_WORKDIR_INVALID' } });
  });

  // A name that only starts with two dots is a folder inside the package; the installer accepts it.
  it('accepts folders whose names start with ".."', () => {
    expect(launch({ workingDirectory: '..dist' })).toEqual({ ok: true, command: 'node', args: [], cwd: join(pkg, '..dist') });
    expect(launch({ command: './..bin/plugin' })).toEqual({ ok: true, command: join(pkg, '..bin/plugin'), args: [], cwd: pkg });
  });

  it('refuses a relative command that leaves the package', () => {
    expect(launch({ command: '../../bin/sh' })).toMatchObject({ ok: false, problem: { code: 'PLUGIN_COMMAND_NOT_FOUND' } });
    expect(launch({ command: '../plugin', workingDirectory: 'bin' })).toMatchObject({ ok: true, command: join(pkg, 'plugin') });
    expect(launch({ command: '../../plugin', workingDirectory: 'bin' })).toMatchObject({
      ok: false,
      problem: { code: 'PLUGIN_COMMAND_NOT_FOUND' },
    });
  });

  // The installer reads either separator and refuses drive letters; launch reads the manifest the same way.
  it('reads manifest paths as the installer does', () => {
    expect(launch({ command: 'bin\\plugin' })).toMatchObject({ ok: true, command: join(pkg, 'bin/plugin') });
    expect(launch({ workingDirectory: 'bin\\..\\..' })).toMatchObject({ ok: false, problem: { code: 'PLUGIN_WORKDIR_INVALID' } });
    expect(launch({ workingDirectory: 'C:x' })).toMatchObject({ ok: false, problem: { code: 'PLUGIN_WORKDIR_INVALID' } });
  });
});
