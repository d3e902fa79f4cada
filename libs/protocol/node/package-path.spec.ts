import { join, resolve, sep } from 'node:path';
import { isInsideDirectory, packagePath } from './package-path';

describe('packagePath', () => {
  // [pieces, expected]: each later piece is relative to the one before (a command to its working directory).
  it.each<[string[], string | undefined]>([
    // The package root and plain folders.
    [['.'], ''],
    [[''], ''],
    [['./'], ''],
    [['bin'], 'bin'],
    [['bin/'], 'bin'],
    [['./bin/./plugin'], 'bin/plugin'],
    [['a/b/../c'], 'a/c'],
    // Only a whole ".." segment leaves the package; "..dist" is a folder in it (drifted in launch, d499599).
    [['..dist'], '..dist'],
    [['./..bin/plugin'], '..bin/plugin'],
    [['...'], '...'],
    [['a..'], 'a..'],
    [['..'], undefined],
    [['../other'], undefined],
    [['bin/../../x'], undefined],
    [['bin/..'], ''],
    // A command resolves against the working directory, not the package root (drifted in launch, 151823e).
    [['bin', './plugin'], 'bin/plugin'],
    [['bin', '../plugin'], 'plugin'],
    [['bin', '../../plugin'], undefined],
    [['..dist', 'index.js'], '..dist/index.js'],
    [['', 'dist/index.js'], 'dist/index.js'],
    [['.', 'dist/index.js'], 'dist/index.js'],
    // Either separator.
    [['bin\\plugin'], 'bin/plugin'],
    [['bin\\..\\..\\x'], undefined],
    [['bin', '..\\plugin'], 'plugin'],
    // Absolute or drive-bound pieces never name a file of the package, wherever they stand.
    [['/etc'], undefined],
    [['\\etc'], undefined],
    [['C:\\x'], undefined],
    [['C:/x'], undefined],
    [['C:x'], undefined],
    [['.', '/abs/index.js'], undefined],
    [['bin', 'C:\\x'], undefined],
    [['/abs', 'index.js'], undefined],
  ])('%j is %j', (pieces, expected) => {
    expect(packagePath(...pieces)).toBe(expected);
  });
});

describe('isInsideDirectory', () => {
  const root = resolve('/data/plugins-v2/com.a.b');
  it.each<[string, boolean]>([
    [root, true],
    [root + sep, true],
    [join(root, 'bin'), true],
    [join(root, '..dist'), true],
    [join(root, '..dist', 'x'), true],
    [resolve(root, '..'), false],
    [resolve(root, '..', 'com.a.bc'), false],
    [`${root}c`, false],
    [resolve('/etc'), false],
  ])('%s is inside: %s', (target, expected) => {
    expect(isInsideDirectory(root, target)).toBe(expected);
  });
});
