import { parseStdioManifest, type StdioManifest } from '@host/protocol';
import { entryOf } from './project';

const manifest = (stdio: object): StdioManifest => {
  const parsed = parseStdioManifest({
    pluginId: 'com.example.entry',
    name: 'E',
    version: '1.0.0',
    author: 'A',
    protocolVersion: 2,
    sdkVersion: '2.0.0',
    transport: { type: 'stdio-jsonrpc', stdio },
    eventSubscriptions: [{ eventType: 'message.created' }],
  });
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.issues));
  return parsed.value;
};

// The packer must find the file the installer will look for: relative to the working directory.
describe('entryOf', () => {
  it.each<[string, object, ReturnType<typeof entryOf>]>([
    ['a node script', { command: 'node', args: ['dist/index.js', '--host-stdio'] }, { kind: 'script', path: 'dist/index.js' }],
    [
      'a node script in the working directory',
      { command: 'node', args: ['index.js'], workingDirectory: 'dist' },
      { kind: 'script', path: 'dist/index.js' },
    ],
    ['a script under a folder named "..dist"', { command: 'node', args: ['..dist/index.js'] }, { kind: 'script', path: '..dist/index.js' }],
    ['a script outside the package', { command: 'node', args: ['../index.js'] }, { kind: 'unknown', command: 'node' }],
    ['an executable', { command: './bin/plugin', args: [] }, { kind: 'executable', path: 'bin/plugin' }],
    [
      'an executable in the working directory',
      { command: './plugin', args: [], workingDirectory: 'bin' },
      { kind: 'executable', path: 'bin/plugin' },
    ],
    ['an executable outside the package', { command: '../plugin', args: [] }, { kind: 'unknown', command: '../plugin' }],
    ['an interpreter on PATH', { command: 'python3', args: ['main.py'] }, { kind: 'unknown', command: 'python3' }],
  ])('%s', (_name, stdio, expected) => {
    expect(entryOf(manifest(stdio))).toEqual(expected);
  });
});
