import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

// npm 11 lists at the end of every install the dependencies whose install scripts the project has not reviewed
// (package.json "allowScripts"; a later npm blocks them). The workspace declares the ones it trusts, so an
// install prints no such list, and a new dependency with an install script shows up here first.

const ROOT = join(__dirname, '..', '..', '..');

it('declares every dependency install script the workspace runs in package.json "allowScripts"', () => {
  const r = spawnSync('npm', ['approve-scripts', '--allow-scripts-pending'], { cwd: ROOT, encoding: 'utf8', timeout: 60_000 });
  expect(`${r.stdout}${r.stderr}`).toContain('No packages with unreviewed install scripts.');
});
