import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { errorDocDrift, markdownSection } from '@host/protocol';
import { CLI_ERRORS, CliError } from './errors';

const readme = readFileSync(join(__dirname, '..', 'README.md'), 'utf8');
const section = markdownSection(readme, 'Error codes');

describe('error catalogue', () => {
  it('is listed in the README, every code and no other', () => {
    expect(errorDocDrift(section, Object.keys(CLI_ERRORS))).toEqual({ undocumented: [], stale: [] });
  });

  it('would notice a code added to or removed from the README table', () => {
    const added = section.replace('| `CLI_USAGE` |', '| `CLI_RETIRED` | gone |\n| `CLI_USAGE` |');
    expect(errorDocDrift(added, Object.keys(CLI_ERRORS))).toEqual({ undocumented: [], stale: ['CLI_RETIRED'] });
    const removed = section.replace(/^\| `PACK_REFUSED` \|.*\n/m, '');
    expect(errorDocDrift(removed, Object.keys(CLI_ERRORS))).toEqual({ undocumented: ['PACK_REFUSED'], stale: [] });
  });

  it('renders the catalogue message as the fix', () => {
    expect(new CliError('PACK_REFUSED', 'nothing written').render()).toBe(
      `error PACK_REFUSED: nothing written\n  fix: ${CLI_ERRORS.PACK_REFUSED.message}`,
    );
  });
});
