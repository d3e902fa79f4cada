import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { containsMismatch, firstHostStep, quickstartScript, quickstartSteps, rerunSteps } from './quickstart';

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

describe('quickstartScript with reruns', () => {
  it('plays the steps that talk to the host again, from the folder of the first, with its variables and the rerun host', () => {
    const dir = mkdtempSync(join(tmpdir(), 'quickstart-rerun-'));
    try {
      const steps = [
        { line: 1, script: 'mkdir app && cd app && ZIP=made.zip' },
        { line: 2, script: 'echo "$ZIP to $HOST_URL"' },
        { line: 3, script: 'echo edited >> ../edits.txt' },
        { line: 4, script: 'cd .. && echo "chat $HOST_URL from $(basename "$PWD")"' },
      ];
      expect(firstHostStep(steps)).toBe(1);
      expect(rerunSteps(steps)).toEqual([1, 3]);
      const script = quickstartScript(steps, join(dir, 'out'), [
        { hostUrl: 'http://second', outDir: join(dir, 'second') },
        { hostUrl: 'http://third', outDir: join(dir, 'third') },
      ]);
      const r = spawnSync('bash', ['-c', script], { cwd: dir, encoding: 'utf8', env: { ...process.env, HOST_URL: 'http://first' } });
      expect(r.status).toBe(0);
      const read = (d: string, n: number) => readFileSync(join(dir, d, `${n}.out`), 'utf8').trim();
      expect([read('out', 1), read('out', 3)]).toEqual(['made.zip to http://first', `chat http://first from ${basename(dir)}`]);
      expect([read('second', 1), read('second', 3)]).toEqual(['made.zip to http://second', `chat http://second from ${basename(dir)}`]);
      expect([read('third', 1), read('third', 3)]).toEqual(['made.zip to http://third', `chat http://third from ${basename(dir)}`]);
      // The step that only edits a file ran once, as a reader makes the edit once.
      expect(readFileSync(join(dir, 'edits.txt'), 'utf8')).toBe('edited\n');
      expect([existsSync(join(dir, 'second/0.out')), existsSync(join(dir, 'second/2.out'))]).toEqual([false, false]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses reruns when no step talks to the host', () => {
    expect(() => quickstartScript([{ line: 1, script: 'echo hi' }], '/nowhere', [{ hostUrl: 'http://x', outDir: '/nowhere2' }])).toThrow(
      /no step talks to the host/,
    );
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
