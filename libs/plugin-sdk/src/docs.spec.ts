import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { documentedErrorCodes, ERROR_CATALOG, errorDocDrift, markdownSection, SDK_SHARED_ERRORS } from '@host/protocol';
import { SDK_ERRORS } from './errors';
import { HTTP_ERROR_CODES, NODE_HTTP_ERRORS } from './http/handler';

// The guide must name every code an author can meet, and only those.
const guide = readFileSync(join(__dirname, '../../../docs/sdk/node.md'), 'utf8');

describe('docs/sdk/node.md', () => {
  it.each([
    ['SDK error codes', 'Errors', Object.keys(SDK_ERRORS)],
    ['HTTP error body codes', 'HTTP transport', HTTP_ERROR_CODES],
  ])('lists every one of its %s in "%s", and no other', (_what, section, codes) => {
    expect(errorDocDrift(markdownSection(guide, section), codes)).toEqual({ undocumented: [], stale: [] });
  });

  it('names only existing codes in the code column of any table', () => {
    const known = new Set<string>([...Object.keys(SDK_ERRORS), ...HTTP_ERROR_CODES, ...Object.keys(ERROR_CATALOG)]);
    expect(documentedErrorCodes(guide).filter((c) => !known.has(c))).toEqual([]);
  });

  it('would notice a code added to or removed from its table', () => {
    const section = markdownSection(guide, 'Errors');
    const added = section.replace('| `SDK_NOT_INITIALIZED` |', '| `SDK_NOT_READY` | a stale code |\n| `SDK_NOT_INITIALIZED` |');
    expect(errorDocDrift(added, Object.keys(SDK_ERRORS))).toEqual({ undocumented: [], stale: ['SDK_NOT_READY'] });
    const removed = section.replace(/^\| `SDK_OUTBOUND_LIMIT` \|.*\n/m, '');
    expect(errorDocDrift(removed, Object.keys(SDK_ERRORS))).toEqual({ undocumented: ['SDK_OUTBOUND_LIMIT'], stale: [] });
  });
});

describe('error catalogues of the SDK', () => {
  it('are the protocol SDK catalogue, and HTTP answers of the protocol plus the Node.js-only ones', () => {
    expect(SDK_ERRORS).toBe(SDK_SHARED_ERRORS);
    const nodeOnly = Object.keys(NODE_HTTP_ERRORS);
    expect(HTTP_ERROR_CODES.filter((c) => !(c in ERROR_CATALOG))).toEqual(nodeOnly);
  });
});
