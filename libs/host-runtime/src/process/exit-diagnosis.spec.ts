import { HOST_STDIO_FLAG } from '@host/protocol';
import { exitError, pollutionError, refusalReason, StderrTail } from './exit-diagnosis';

const exited = { code: 1, signal: null, at: '2026-01-01T00:00:00.000Z' };

describe('StderrTail', () => {
  it('quotes the first error line even when a long stack pushed it out of the last lines, and leaves stack frames out', () => {
    const tail = new StderrTail();
    tail.add('starting');
    tail.add("TypeError: Cannot read properties of undefined (reading 'x')");
    for (let i = 0; i < 20; i++) tail.add(`    at frame${i} (plugin.js:${i}:1)`);
    for (let i = 0; i < 10; i++) tail.add(`line ${i}`);
    const text = tail.text();
    expect(text.startsWith(": TypeError: Cannot read properties of undefined (reading 'x'); stderr tail: ")).toBe(true);
    expect(text).not.toContain('frame');
    expect(text).toContain('line 9');
    expect(text).not.toContain('line 1\\n');
  });

  it('says so when the process wrote nothing to stderr', () => {
    expect(new StderrTail().text()).toBe('; it wrote nothing to stderr');
  });
});

describe('exitError', () => {
  const base = { spawnError: null, exit: exited, command: 'node', args: ['plugin.js', HOST_STDIO_FLAG], stderr: new StderrTail() };

  it('names a command that is missing from the package or from PATH, or that cannot be executed', () => {
    const enoent = Object.assign(new Error('spawn ENOENT'), { code: 'ENOENT' });
    expect(exitError({ ...base, spawnError: enoent, command: './bin/run' })).toMatchObject({
      code: 'PLUGIN_COMMAND_NOT_FOUND',
      message: 'command "./bin/run" does not exist in the package',
    });
    expect(exitError({ ...base, spawnError: enoent, command: 'deno' }).message).toBe(
      'command "deno" was not found on PATH; install it on the host',
    );
    const eacces = Object.assign(new Error('spawn EACCES'), { code: 'EACCES' });
    expect(exitError({ ...base, spawnError: eacces, command: './run' }).message).toMatch(/chmod \+x/);
  });

  it('points at the manifest when it does not pass the stdio flag, and quotes stderr', () => {
    const stderr = new StderrTail();
    stderr.add('usage: plugin [--host-stdio]');
    const e = exitError({ ...base, args: ['plugin.js'], stderr });
    expect(e.code).toBe('PLUGIN_START_FAILED');
    expect(e.message).toContain(`add "${HOST_STDIO_FLAG}" to transport.stdio.args`);
    expect(e.message).toContain('usage: plugin');
  });

  it('says how the process ended before the handshake', () => {
    expect(exitError({ ...base, exit: { ...exited, code: null, signal: 'SIGKILL' } }).message).toBe(
      'was killed by SIGKILL before answering host.initialize; it wrote nothing to stderr',
    );
  });
});

it('words stdout pollution with its code and where it happened', () => {
  const e = pollutionError({ code: 'framing.header.malformed', message: 'not a header', bytes: '"hello\\n"' }, 'during the handshake');
  expect(e.code).toBe('PLUGIN_STDOUT_POLLUTION');
  expect(e.message).toContain('during the handshake the plugin wrote "hello\\n" to stdout');
});

it('shows a settings refusal without its stack, bounded', () => {
  expect(refusalReason('city is required\n    at check (plugin.js:1:1)')).toBe('city is required');
  expect(refusalReason('   ')).toBe('it gave no reason');
  expect(refusalReason('x'.repeat(600))).toHaveLength(501);
});
