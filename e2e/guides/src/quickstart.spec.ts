import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { containsMismatch, quickstartScript, quickstartSteps } from './quickstart';

const PAGE = [
  '# Guide',
  '',
  '```sh',
  'not run',
  '```',
  '',
  '```sh quickstart',
  'mkdir there && cd there',
  'echo one',
  '```',
  '',
  'Then:',
  '',
  '```sh quickstart',
  'echo \'{"a":1,"list":[{"x":1},{"y":2}],"more":true}\'',
  '```',
  '',
  '```json quickstart-output',
  '{ "list": [{ "y": 2 }], "a": 1 }',
  '```',
  '',
].join('\n');

describe('quickstartSteps', () => {
  it('takes the marked blocks in page order with the output that follows one', () => {
    const steps = quickstartSteps(PAGE);
    expect(steps).toEqual([
      { line: 7, script: 'mkdir there && cd there\necho one' },
      { line: 14, script: 'echo \'{"a":1,"list":[{"x":1},{"y":2}],"more":true}\'', expect: { line: 18, json: { list: [{ y: 2 }], a: 1 } } },
    ]);
  });

  it('refuses an output block that follows no step, a misspelt marker and output that is not JSON', () => {
    expect(() => quickstartSteps('```json quickstart-output\n{}\n```\n')).toThrow(/line 1: a quickstart-output block must follow/);
    expect(() => quickstartSteps('```sh quickstrat\nx\n```\n```sh quickstart-run\nx\n```\n')).toThrow(
      /line 4: unknown marker "quickstart-run"/,
    );
    expect(() => quickstartSteps('```sh quickstart\nx\n```\n```json quickstart-output\n{a}\n```\n')).toThrow(/line 4: .* not JSON/);
    expect(() => quickstartSteps('```python quickstart\nx\n```\n')).toThrow(/must be sh or bash/);
    expect(() => quickstartSteps('```sh quickstart\nx\n')).toThrow(/never closed/);
  });

  it('finds nothing in a page without marked blocks', () => {
    expect(quickstartSteps('# t\n\n```sh\nls\n```\n')).toEqual([]);
  });
});

describe('quickstartScript', () => {
  it('runs the steps in one shell, keeps each output apart and stops at the first failure', () => {
    const dir = mkdtempSync(join(tmpdir(), 'quickstart-script-'));
    try {
      const steps = [...quickstartSteps(PAGE), { line: 30, script: 'false' }, { line: 31, script: 'echo never' }];
      const r = spawnSync('bash', ['-c', quickstartScript(steps, join(dir, 'out'))], { cwd: dir, encoding: 'utf8' });
      expect(r.status).not.toBe(0);
      // The `cd` of the first step held for the second: both ran in `there`.
      expect(existsSync(join(dir, 'there'))).toBe(true);
      expect(readFileSync(join(dir, 'out/0.out'), 'utf8')).toBe('one\n');
      expect(JSON.parse(readFileSync(join(dir, 'out/1.out'), 'utf8'))).toMatchObject({ a: 1 });
      expect(existsSync(join(dir, 'out/1.done'))).toBe(true);
      expect(existsSync(join(dir, 'out/2.done'))).toBe(false);
      expect(existsSync(join(dir, 'out/3.out'))).toBe(false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('containsMismatch', () => {
  it('accepts more keys and items, in order', () => {
    expect(containsMismatch({ a: 1, b: [1, 2, 3] }, { b: [1, 3] })).toBeNull();
  });

  it('names the path of the first difference', () => {
    expect(containsMismatch({ a: { b: 'x' } }, { a: { b: 'y' } })).toBe('$.a.b: expected "y", got "x"');
    expect(containsMismatch({ a: [] }, { a: [1] })).toMatch(/^\$\.a: no item/);
    expect(containsMismatch({ b: [3, 1] }, { b: [1, 3] })).toMatch(/^\$\.b: no item/);
    expect(containsMismatch({}, { c: null })).toMatch(/^\$\.c: missing/);
    expect(containsMismatch('1', 1)).toBe('$: expected 1, got "1"');
  });
});
