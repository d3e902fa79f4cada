import { flag, parseArgs } from './args';

describe('parseArgs', () => {
  it('reads positionals, valued, repeated and boolean flags', () => {
    const a = parseArgs(['dir', '--out', 'x', '--include=a', '--include', 'b', '--force'], ['out', 'include'], ['force']);
    expect(a.positional).toEqual(['dir']);
    expect([flag(a, 'out'), a.flags.get('include'), a.flags.has('force')]).toEqual(['x', ['a', 'b'], true]);
  });

  it('names unknown options and missing values', () => {
    expect(() => parseArgs(['--ot', 'x'], ['out'], [])).toThrow(/unknown option --ot \(this command takes: --out\)/);
    expect(() => parseArgs(['--out'], ['out'], [])).toThrow(/--out needs a value/);
    expect(() => parseArgs(['--force=yes'], [], ['force'])).toThrow(/takes no value/);
  });
});

describe('parseArgs cases', () => {
  const valued = ['out', 'include'];
  const booleans = ['force', 'stdout'];
  // [argv, positionals, flags] or [argv, the usage error].
  it.each<[string[], string[], Record<string, string[]>] | [string[], RegExp]>([
    [[], [], {}],
    [['a', 'b'], ['a', 'b'], {}],
    [['--out', 'x', 'dir'], ['dir'], { out: ['x'] }],
    [['--out=x=y'], [], { out: ['x=y'] }],
    [['--out='], [], { out: [''] }],
    [['--out', '--force'], [], { out: ['--force'] }],
    [['--out', '-'], [], { out: ['-'] }],
    [['--include', 'a', '--include=b', '--include', 'c'], [], { include: ['a', 'b', 'c'] }],
    [['--force', '--stdout', '--force'], [], { force: ['true', 'true'], stdout: ['true'] }],
    [['-x', '-'], ['-x', '-'], {}],
    [['-abc'], ['-abc'], {}],
    [['dir', '--', '--force', 'x'], ['dir', '--force', 'x'], {}],
    [['--', '--'], ['--'], {}],
    [['--force=1'], /^--force takes no value$/],
    [['--out'], /^--out needs a value$/],
    [['--colour'], /^unknown option --colour \(this command takes: --out, --include, --force, --stdout\)$/],
    [['--colour=red'], /^unknown option --colour \(this command takes/],
    [['--force', '--out'], /^--out needs a value$/],
    [['--unknown', '--out'], /^unknown option --unknown/],
  ])('%j', (argv, ...expected) => {
    if (expected[0] instanceof RegExp) {
      expect(() => parseArgs(argv, valued, booleans)).toThrow(expected[0]);
      return;
    }
    const [positional, flags] = expected as [string[], Record<string, string[]>];
    const a = parseArgs(argv, valued, booleans);
    expect({ positional: a.positional, flags: Object.fromEntries(a.flags) }).toEqual({ positional, flags });
  });

  it('names "none" when a command takes no options', () => {
    expect(() => parseArgs(['--x'], [], [])).toThrow(/unknown option --x \(this command takes: none\)/);
  });

  it('throws CLI_USAGE', () => {
    expect(() => parseArgs(['--x'], [], [])).toThrow(expect.objectContaining({ code: 'CLI_USAGE' }));
  });
});
