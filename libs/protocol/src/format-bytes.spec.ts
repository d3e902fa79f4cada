import { formatBytes } from './limits';

describe('formatBytes', () => {
  it('writes whole units without decimals, others with one, and bytes below a KiB', () => {
    expect([0, 1, 1023, 1024, 1536, 64 * 1024 * 1024, 1.25 * 1024 * 1024, 3 * 1024 ** 3].map(formatBytes)).toEqual([
      '0 bytes',
      '1 byte',
      '1023 bytes',
      '1 KiB',
      '1.5 KiB',
      '64 MiB',
      '1.3 MiB',
      '3 GiB',
    ]);
  });
});
