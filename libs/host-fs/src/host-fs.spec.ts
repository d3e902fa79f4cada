import { promises as fs, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fsyncDir, isAtomicTempName, readJsonFile, writeJsonAtomic } from './atomic-write';
import { processStartTime, processState } from './process-stat';

describe('JSON files', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'host-fs-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('writes pretty-printed JSON with a trailing newline and reads it back', async () => {
    const f = join(dir, 'a.json');
    await writeJsonAtomic(f, { b: [1, 2] });
    expect(await fs.readFile(f, 'utf8')).toBe('{\n  "b": [\n    1,\n    2\n  ]\n}\n');
    expect(await readJsonFile(f)).toEqual({ b: [1, 2] });
  });

  it('reads a missing file as undefined and refuses a file that is not JSON', async () => {
    expect(await readJsonFile(join(dir, 'missing.json'))).toBeUndefined();
    await fs.writeFile(join(dir, 'torn.json'), '{"b": [1,');
    await expect(readJsonFile(join(dir, 'torn.json'))).rejects.toThrow(SyntaxError);
  });

  it('tells the temporary files of an interrupted write from other names', () => {
    expect(isAtomicTempName('.a.json.0123456789ab.tmp')).toBe(true);
    expect(isAtomicTempName('a.json')).toBe(false);
    expect(isAtomicTempName('.a.json.tmp')).toBe(false);
  });

  const posix = process.platform === 'win32' ? it.skip : it;
  posix('fails to fsync a directory that does not exist', async () => {
    await expect(fsyncDir(join(dir, 'nope'))).rejects.toMatchObject({ code: 'ENOENT' });
    await expect(fsyncDir(dir)).resolves.toBeUndefined();
  });
});

describe('process stat', () => {
  const onLinux = processStartTime(process.pid) !== undefined ? it : it.skip;
  onLinux("reads this process's start time and state, and nothing for a pid that does not run", () => {
    expect(processStartTime(process.pid)).toMatch(/^\d+$/);
    expect(processState(process.pid)).toMatch(/^[RS]$/);
    // Far above any pid_max: certainly not running.
    expect(processStartTime(2147483646)).toBeUndefined();
    expect(processState(2147483646)).toBeUndefined();
  });
});
