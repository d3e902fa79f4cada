import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { errorDocDrift, markdownSection, PACK_ERRORS } from '@host/protocol';
import { CLI_ERRORS, CliError, NODE_PACK_CODES } from './errors';

const readme = readFileSync(join(__dirname, '..', 'README.md'), 'utf8');
const section = markdownSection(readme, 'Error codes');
const codes = [...Object.keys(CLI_ERRORS), ...NODE_PACK_CODES];

describe('error catalogue', () => {
  it('is listed in the README, every code and no other', () => {
    expect(errorDocDrift(section, codes)).toEqual({ undocumented: [], stale: [] });
  });

  it('would notice a code added to or removed from the README table', () => {
    const added = section.replace('| `CLI_USAGE` |', '| `CLI_RETIRED` | gone |\n| `CLI_USAGE` |');
    expect(errorDocDrift(added, codes)).toEqual({ undocumented: [], stale: ['CLI_RETIRED'] });
    const removed = section.replace(/^\| `PACK_ENTRY_MISSING` \|.*\n/m, '');
    expect(errorDocDrift(removed, codes)).toEqual({ undocumented: ['PACK_ENTRY_MISSING'], stale: [] });
  });

  it('takes the packer codes from the protocol catalogue, which every packer shares', () => {
    expect(NODE_PACK_CODES.filter((c) => !(c in PACK_ERRORS))).toEqual([]);
    expect(Object.keys(CLI_ERRORS).filter((c) => c in PACK_ERRORS)).toEqual([]);
  });

  it('renders the catalogue message as the fix', () => {
    expect(new CliError('PACK_ENTRY_MISSING', 'nothing written').render()).toBe(
      `error PACK_ENTRY_MISSING: nothing written\n  fix: ${PACK_ERRORS.PACK_ENTRY_MISSING.message}`,
    );
    expect(new CliError('CLI_USAGE', 'bad').render()).toBe(`error CLI_USAGE: bad\n  fix: ${CLI_ERRORS.CLI_USAGE.message}`);
  });
});
