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
