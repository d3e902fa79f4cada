import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { satisfies, subset } from 'semver';

// The Node.js versions package.json "engines" declares are the ones every installed package supports, so
// `npm install` on any of them warns of no EBADENGINE. Platform builds that npm installs only where they fit
// (optional, with os or cpu) are left out.

const ROOT = join(__dirname, '..', '..', '..');
const json = (file: string) => JSON.parse(readFileSync(join(ROOT, file), 'utf8'));

interface LockEntry {
  version?: string;
  engines?: { node?: string } | string[];
  optional?: boolean;
  os?: string[];
  cpu?: string[];
}

function narrower(range: string, packages: Record<string, LockEntry>): string[] {
  return Object.entries(packages).flatMap(([path, entry]) => {
    const needs = Array.isArray(entry.engines) ? undefined : entry.engines?.node;
    if (!path || !needs || (entry.optional && (entry.os || entry.cpu))) return [];
    return subset(range, needs) ? [] : [`${path}@${entry.version}: node ${needs}`];
  });
}

it('declares only Node.js versions that every installed package supports', () => {
  const lock = json('package-lock.json') as { packages: Record<string, LockEntry> };
  expect(narrower(json('package.json').engines.node, lock.packages)).toEqual([]);
});

it('runs on what it declares', () => {
  expect({ node: process.versions.node, ok: satisfies(process.versions.node, json('package.json').engines.node) }).toMatchObject({
    ok: true,
  });
});

it('finds a dependency that needs a newer Node.js than the range declares', () => {
  expect(narrower('>=20.15', { 'node_modules/x': { version: '1.0.0', engines: { node: '>=22.22.0' } } })).toEqual([
    'node_modules/x@1.0.0: node >=22.22.0',
  ]);
});
