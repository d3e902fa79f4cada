import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CLI_ERRORS } from './errors';

describe('error catalogue', () => {
  it('documents every code in the README', () => {
    const readme = readFileSync(join(__dirname, '..', 'README.md'), 'utf8');
    expect(Object.keys(CLI_ERRORS).filter((code) => !readme.includes(`\`${code}\``))).toEqual([]);
  });
});
