import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { SDK_ERRORS } from './errors';
import { HTTP_ERROR_CODES } from './http/handler';

// The guide must name every code an author can meet.
const guide = readFileSync(join(__dirname, '../../../docs/sdk/node.md'), 'utf8');

describe('docs/sdk/node.md', () => {
  it('documents every SDK error code', () => {
    expect(Object.keys(SDK_ERRORS).filter((c) => !guide.includes(`\`${c}\``))).toEqual([]);
  });

  it('documents every HTTP error body code', () => {
    expect(HTTP_ERROR_CODES.filter((c) => !guide.includes(`\`${c}\``))).toEqual([]);
  });
});
