import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import AdmZip from 'adm-zip';
import { run } from './cli';
import type { CliIO } from './io';
import { isPythonProject, PYTHON_SDK_VERSION, pythonSdkSource } from './python';

function io(cwd: string): CliIO & { lines: string[] } {
  const lines: string[] = [];
  return { cwd, lines, out: (t) => void lines.push(t), err: (t) => void lines.push(t), interactive: false, ask: async () => '' };
}

describe('host-plugin init --lang python', () => {
  let root: string;
  beforeAll(() => {
    root = mkdtempSync(join(tmpdir(), 'host-plugin-python-'));
  });
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it('scaffolds a project whose own tests pass and that `host-plugin pack` packs with the Python packer', async () => {
    const out = io(root);
    expect(await run(['init', 'py-echo', '--lang', 'python', '--id', 'com.example.pyecho', '--author', 'Me'], out)).toBe(0);
    const dir = join(root, 'py-echo');
    for (const file of [
      'manifest.json',
      'plugin.py',
      'tests/test_plugin.py',
      'requirements.txt',
      'host_sdk_v2/__init__.py',
      'host_sdk_v2/py.typed',
    ]) {
      expect(existsSync(join(dir, file))).toBe(true);
    }
    expect(isPythonProject(dir)).toBe(true);
    const manifest = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8'));
    expect(manifest.transport.stdio).toEqual({ command: 'python3', args: ['plugin.py', '--host-stdio'], workingDirectory: '.' });

    const tests = spawnSync('python3', ['-m', 'unittest'], {
      cwd: dir,
      encoding: 'utf8',
      env: { ...process.env, PYTHONDONTWRITEBYTECODE: '1' },
    });
    expect(tests.stderr).toMatch(/Ran 5 tests[\s\S]*OK/);
    expect(tests.status).toBe(0);

    // The type hints of the project and its vendored SDK are accepted by pyright (a devDependency here).
    const pyright = spawnSync(process.execPath, [require.resolve('pyright/index.js'), '--pythonversion', '3.9', '.'], {
      cwd: dir,
      encoding: 'utf8',
    });
    expect(pyright.stdout).toMatch(/0 errors/);
    expect(pyright.status).toBe(0);

    expect(await run(['pack', dir], io(root))).toBe(0);
    const zip = new AdmZip(join(dir, 'artifacts', 'com.example.pyecho.zip'));
    const names = zip.getEntries().map((e) => e.entryName);
    expect(names).toEqual([...names].sort());
    expect(names).toEqual(expect.arrayContaining(['manifest.json', 'plugin.py', 'host_sdk_v2/stdio.py']));
    expect(names.some((n) => n.startsWith('tests/') || n.includes('__pycache__'))).toBe(false);
  }, 60_000);

  it('validates a scaffolded project with the Python packer, and names what is wrong in a broken one', async () => {
    expect(await run(['init', 'py-valid', '--lang', 'python', '--id', 'com.example.pyvalid'], io(root))).toBe(0);
    const dir = join(root, 'py-valid');
    const good = io(root);
    expect(await run(['validate', dir], good)).toBe(0);
    expect(good.lines.join('\n')).toMatch(/ok: com\.example\.pyvalid 1\.0\.0 is ready to pack/);
    expect(existsSync(join(dir, 'artifacts'))).toBe(false);

    const manifestFile = join(dir, 'manifest.json');
    const manifest = JSON.parse(readFileSync(manifestFile, 'utf8'));
    writeFileSync(
      manifestFile,
      JSON.stringify({ ...manifest, transport: { ...manifest.transport, stdio: { command: 'python3', args: ['plugin.py'] } } }),
    );
    const noFlag = io(root);
    expect(await run(['validate', dir], noFlag)).toBe(1);
    expect(noFlag.lines.join('\n')).toMatch(/PACK_HOST_STDIO_MISSING/);

    writeFileSync(manifestFile, JSON.stringify({ ...manifest, pluginId: 'Not An Id' }));
    const badId = io(root);
    expect(await run(['validate', dir], badId)).toBe(1);
    expect(badId.lines.join('\n')).toMatch(/PACK_MANIFEST_INVALID[\s\S]*manifest\.pluginId\.invalid at pluginId/);
  }, 60_000);

  it('refuses an unknown language and Node-only options', async () => {
    const out = io(root);
    expect(await run(['init', 'x', '--lang', 'cobol'], out)).toBe(2);
    expect(out.lines.join('\n')).toMatch(/--lang cobol is not known/);
    expect(await run(['init', 'y', '--lang', 'python', '--intercepts'], io(root))).toBe(2);
  });

  it('names the same SDK version as the Python SDK itself', () => {
    const version = readFileSync(join(pythonSdkSource(), '_generated', 'version.py'), 'utf8');
    expect(version).toContain(`SDK_VERSION = "${PYTHON_SDK_VERSION}"`);
  });

  it('reports a missing interpreter with its code', async () => {
    const out = io(root);
    expect(await run(['init', 'py-two', '--lang', 'python'], out)).toBe(0);
    const previous = process.env['HOST_PLUGIN_PYTHON'];
    process.env['HOST_PLUGIN_PYTHON'] = join(root, 'no-such-python');
    try {
      const packOut = io(root);
      expect(await run(['pack', join(root, 'py-two')], packOut)).toBe(1);
      expect(packOut.lines.join('\n')).toMatch(/error PYTHON_NOT_FOUND/);
    } finally {
      if (previous === undefined) delete process.env['HOST_PLUGIN_PYTHON'];
      else process.env['HOST_PLUGIN_PYTHON'] = previous;
    }
  });
});
