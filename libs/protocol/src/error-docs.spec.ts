import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { HOST_BLOCKS } from '../scripts/doc-tables';
import {
  documentedErrorCodes,
  ERROR_CATALOG,
  errorDocDrift,
  markdownSection,
  PACK_ERRORS,
  SDK_SHARED_ERRORS,
  withoutGeneratedBlocks,
} from './index';

const PAGE = `# Guide

Prose may name \`NOT_A_CODE\` freely.

## Errors

| code | meaning and fix |
|---|---|
| \`A_ONE\` | first |
| \`a.two\`, \`a.three\` | two codes in one cell; \`not.this\` is in another column |

| status | body \`error.code\` | when |
|---|---|---|
| 400 | \`b.one\` | a pipe \\| inside a cell |

| name | value |
|---|---|
| \`LIMIT\` | 3 |

## Other

| code | meaning |
|---|---|
| \`OUTSIDE\` | in another section |
`;

describe('documentedErrorCodes', () => {
  it('reads the backticked names of every code column, and nothing else', () => {
    expect(documentedErrorCodes(PAGE)).toEqual(['A_ONE', 'a.two', 'a.three', 'b.one', 'OUTSIDE']);
  });

  it('keeps to one section when given it', () => {
    expect(documentedErrorCodes(markdownSection(PAGE, 'Errors'))).toEqual(['A_ONE', 'a.two', 'a.three', 'b.one']);
    expect(() => markdownSection(PAGE, 'Missing')).toThrow('no heading "Missing"');
  });
});

describe('errorDocDrift', () => {
  const section = markdownSection(PAGE, 'Errors');

  it('is empty when page and catalogue agree', () => {
    expect(errorDocDrift(section, ['A_ONE', 'a.two', 'a.three', 'b.one'])).toEqual({ undocumented: [], stale: [] });
  });

  it('names a catalogue code the page lacks and a page code the catalogue lacks', () => {
    expect(errorDocDrift(section, ['A_ONE', 'a.two', 'b.one', 'C_NEW'])).toEqual({ undocumented: ['C_NEW'], stale: ['a.three'] });
  });
});

describe('the check of docs/protocol/v2.md section 11', () => {
  // The host's own codes are a block of the host's catalogue (@host/host-errors checks it); the rest is the protocol's.
  const section = withoutGeneratedBlocks(
    markdownSection(readFileSync(join(__dirname, '..', '..', '..', 'docs', 'protocol', 'v2.md'), 'utf8'), '11. Errors'),
    HOST_BLOCKS,
  );
  const codes = [...Object.keys(ERROR_CATALOG), ...Object.keys(SDK_SHARED_ERRORS), ...Object.keys(PACK_ERRORS)];

  it('fails for a code added to the page that the catalogue lacks', () => {
    expect(errorDocDrift(section, codes)).toEqual({ undocumented: [], stale: [] });
    const added = section.replace('| `plugin.handler_failed` |', '| `plugin.handler_lost` | gone |\n| `plugin.handler_failed` |');
    expect(errorDocDrift(added, codes).stale).toEqual(['plugin.handler_lost']);
  });

  it('fails for a catalogue code removed from the page', () => {
    const removed = section.replace(/^\| `delivery\.dropped` \|.*\n/m, '');
    expect(removed).not.toBe(section);
    expect(errorDocDrift(removed, codes).undocumented).toEqual(['delivery.dropped']);
  });
});
