import AdmZip from 'adm-zip';
import { execFileSync, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { FrameDecoder, RELEASE_VERSIONS, encodeFrame, type JsonRpcMessage } from '@host/protocol';
import { cli } from './cli.spec-helper';

// The whole author workflow on a generated project: init, build, test,
// validate, pack twice (same bytes), then run the plugin from the extracted
// ZIP alone, outside the workspace, and talk to it as the host does.
const ROOT = resolve(__dirname, '../../..');
const SDK = join(ROOT, 'libs/plugin-sdk');
const TSC = require.resolve('typescript/bin/tsc');
const JEST = require.resolve('jest/bin/jest');

let work: string;
let project: string;
const cleanup: string[] = [];
beforeAll(() => {
  // In the workspace's tmp/ (ignored by git and lint), so the project's dev
  // tools (typescript, jest, @types) resolve upwards as in a real checkout.
  mkdirSync(join(ROOT, 'tmp'), { recursive: true });
  work = mkdtempSync(join(ROOT, 'tmp', 'host-plugin-pack-'));
  project = join(work, 'greeter');
  cleanup.push(work);
});
afterAll(() => cleanup.forEach((d) => rmSync(d, { recursive: true, force: true })));

const sha = (file: string) => createHash('sha256').update(readFileSync(file)).digest('hex');

describe('a generated project from init to a running ZIP', () => {
  it('init scaffolds the project', async () => {
    const r = await cli(work, ['init', 'greeter', '--id', 'com.example.greeter', '--name', 'Greeter', '--author', 'Tests']);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/Created com.example.greeter/);
    expect((await cli(work, ['init', 'greeter'])).err).toMatch(/INIT_TARGET_NOT_EMPTY/);
    // What `npm install` does for a workspace or file: dependency.
    mkdirSync(join(project, 'node_modules/@host'), { recursive: true });
    symlinkSync(SDK, join(project, 'node_modules/@host/plugin-sdk-v2'), 'dir');
  });

  it('refuses to pack before the build (source only)', async () => {
    const v = await cli(project, ['validate']);
    expect(v.code).toBe(1);
    expect(v.out).toMatch(/error PACK_ENTRY_MISSING: dist\/index.js does not exist/);
    const p = await cli(project, ['pack']);
    expect(p.code).toBe(1);
    expect(p.err).toMatch(/^error PACK_ENTRY_MISSING: \d+ problems? above, so no package was written/);
  });

  it('builds, and its own tests pass against the test host', () => {
    execFileSync(process.execPath, [TSC, '-p', join(project, 'tsconfig.build.json')], { cwd: project, encoding: 'utf8' });
    execFileSync(process.execPath, [JEST, '-c', join(project, 'jest.config.js'), '--rootDir', project], {
      cwd: project,
      encoding: 'utf8',
      stdio: 'pipe',
    });
  });

  it('validates and packs reproducibly, listing what went in', async () => {
    expect((await cli(project, ['validate'])).out).toMatch(/ok: ready to pack/);
    const first = await cli(project, ['pack']);
    expect(first.code).toBe(0);
    expect(first.out).toMatch(/manifest.json\s+1 file/);
    expect(first.out).toMatch(/entry folder dist\/\s+\d+ files/);
    expect(first.out).toContain(`@host/plugin-sdk-v2@${RELEASE_VERSIONS.sdkVersion} (linked, published files)`);
    expect(first.out).toMatch(/total: \d+ files, .* unpacked, .* zipped/);
    const zip = join(project, 'artifacts/com.example.greeter.zip');
    const hash = sha(zip);
    expect(first.out).toContain(`sha256 ${hash}`);
    rmSync(zip);
    expect((await cli(project, ['pack'])).code).toBe(0);
    expect(sha(zip)).toBe(hash);
    const names = new AdmZip(zip).getEntries().map((e) => e.entryName);
    expect(names).toEqual([...names].sort());
    expect(names).toEqual(
      expect.arrayContaining([
        'manifest.json',
        'package.json',
        'dist/index.js',
        'dist/plugin.js',
        'node_modules/@host/plugin-sdk-v2/package.json',
        'node_modules/@host/plugin-sdk-v2/dist/index.cjs',
      ]),
    );
    expect(
      names.filter((n) =>
        /^(src\/|tsconfig|jest\.config|node_modules\/@host\/plugin-sdk-v2\/(src|scripts|test-fixtures)\/)|\.spec\./.test(n),
      ),
    ).toEqual([]);
  });

  it('runs from the extracted ZIP alone and replies in Markdown mentioning the sender', async () => {
    const installed = mkdtempSync(join(tmpdir(), 'host-plugin-installed-'));
    cleanup.push(installed);
    new AdmZip(join(project, 'artifacts/com.example.greeter.zip')).extractAllTo(installed);
    const manifest = JSON.parse(readFileSync(join(installed, 'manifest.json'), 'utf8'));
    const child = spawn(process.execPath, manifest.transport.stdio.args, { cwd: installed, stdio: ['pipe', 'pipe', 'pipe'] });
    const messages: JsonRpcMessage[] = [];
    const decoder = new FrameDecoder();
    const waiters: Array<() => void> = [];
    child.stdout.on('data', (b: Buffer) => {
      for (const e of decoder.push(b)) {
        if (e.kind === 'error') throw new Error(`stdout is not frames: ${e.code}`);
        messages.push(e.message);
        if ('method' in e.message && e.message.method === 'messages.reply')
          child.stdin.write(
            encodeFrame({ jsonrpc: '2.0', id: e.message.id, result: { accepted: true, target: { type: 'group', id: 'g1' } } }),
          );
        if ('method' in e.message && e.message.method === 'events.completed')
          child.stdin.write(encodeFrame({ jsonrpc: '2.0', id: e.message.id, result: { recorded: true } }));
      }
      waiters.splice(0).forEach((w) => w());
    });
    const first = (match: (m: JsonRpcMessage) => boolean) =>
      new Promise<JsonRpcMessage>((res) => {
        const check = () => {
          const m = messages.find(match);
          if (m) res(m);
          else waiters.push(check);
        };
        check();
      });
    const response = (id: number) => first((x) => !('method' in x) && x.id === id);
    try {
      child.stdin.write(
        encodeFrame({
          jsonrpc: '2.0',
          id: 1,
          method: 'host.initialize',
          params: {
            supportedProtocolVersions: [2],
            instanceId: 'i1',
            pluginId: 'com.example.greeter',
            hostVersion: '1.0.0',
            directories: {
              pluginDirectory: installed,
              pluginDataDirectory: installed,
              pluginConfigDirectory: installed,
              pluginCacheDirectory: installed,
            },
            token: 'x'.repeat(32),
            encoding: 'json',
          },
        }),
      );
      expect(await response(1)).toMatchObject({ result: { pluginId: 'com.example.greeter', sdkName: '@host/plugin-sdk-v2' } });
      child.stdin.write(
        encodeFrame({
          jsonrpc: '2.0',
          id: 2,
          method: 'events.message',
          params: {
            eventId: 'e1',
            eventType: 'message.created',
            timestamp: new Date().toISOString(),
            source: 'qqbot',
            bot: { botAccountId: 'b', platform: 'qqbot' },
            conversation: { type: 'group', conversationId: 'g1' },
            sender: { provider: 'qqbot', mentionId: 'U1', displayName: 'Ann' },
            message: { id: 'm1', content: '/echo hi', attachments: [], mentions: [] },
            messageReference: { messageId: 'm1', targetType: 'group', targetId: 'g1', restrictions: [] },
            command: { name: 'echo', word: 'echo', prefix: '/', args: 'hi' },
          },
        }),
      );
      // The ACK is the decision, sent before the handler runs; its end is reported by events.completed.
      expect(await response(2)).toMatchObject({ result: { eventId: 'e1', accepted: true } });
      expect(await first((m) => 'method' in m && m.method === 'events.completed')).toMatchObject({
        params: { eventId: 'e1', error: null },
      });
      const reply = messages.find((m) => 'method' in m && m.method === 'messages.reply') as { params: unknown };
      expect(reply.params).toMatchObject({
        eventId: 'e1',
        message: {
          format: 'markdown',
          parts: [
            { type: 'mention', target: 'user', id: 'U1' },
            { type: 'text', text: ' said: **' },
            { type: 'text', text: 'hi', literal: true },
            { type: 'text', text: '**' },
          ],
        },
      });
    } finally {
      child.kill();
    }
  });
});

describe('validate findings', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(work, 'case-'));
    mkdirSync(join(dir, 'dist'));
    writeFileSync(join(dir, 'dist/index.js'), '');
    mkdirSync(join(dir, 'node_modules/@host'), { recursive: true });
    symlinkSync(SDK, join(dir, 'node_modules/@host/plugin-sdk-v2'), 'dir');
  });
  const write = (
    manifestOver: Record<string, unknown>,
    pkg: Record<string, unknown> = { dependencies: { '@host/plugin-sdk-v2': '^2.0.0' } },
  ) => {
    const manifest = {
      pluginId: 'com.example.v',
      name: 'V',
      version: '1.0.0',
      author: 'A',
      protocolVersion: 2,
      sdkVersion: RELEASE_VERSIONS.sdkVersion,
      transport: { type: 'stdio-jsonrpc', stdio: { command: 'node', args: ['dist/index.js', '--host-stdio'] } },
      eventSubscriptions: [{ eventType: 'message.created' }],
      ...manifestOver,
    };
    writeFileSync(join(dir, 'manifest.json'), JSON.stringify(manifest));
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'v', version: '1.0.0', ...pkg }));
  };
  const codes = async () => {
    const r = await cli(dir, ['validate']);
    return [...r.out.matchAll(/(error|warn) +([\w.]+):/g)].map((m) => `${m[1]} ${m[2]}`);
  };
  const stdio = (args: string[], command = 'node') => ({ transport: { type: 'stdio-jsonrpc', stdio: { command, args } } });

  it('passes a correct project', async () => {
    write({});
    expect(await codes()).toEqual([]);
  });

  it.each([
    ['missing --host-stdio', stdio(['dist/index.js']), 'error PACK_HOST_STDIO_MISSING'],
    ['absolute path', stdio(['/srv/plugin/dist/index.js', '--host-stdio']), 'error PACK_ABSOLUTE_PATH'],
    ['TypeScript entry', stdio(['src/index.ts', '--host-stdio']), 'error PACK_ENTRY_SOURCE_ONLY'],
    ['python command', stdio(['main.py', '--host-stdio'], 'python3'), 'error PACK_COMMAND_UNSUPPORTED'],
    [
      'working directory outside',
      { transport: { type: 'stdio-jsonrpc', stdio: { command: 'node', args: ['index.js', '--host-stdio'], workingDirectory: '../x' } } },
      'error PACK_WORKDIR_OUTSIDE',
    ],
    [
      'missing working directory',
      { transport: { type: 'stdio-jsonrpc', stdio: { command: 'node', args: ['index.js', '--host-stdio'], workingDirectory: 'build' } } },
      'error PACK_WORKDIR_MISSING',
    ],
    ['sdk version', { sdkVersion: '1.9.9' }, 'warn PACK_SDK_VERSION_MISMATCH'],
  ])('reports %s', async (_name, over, code) => {
    write(over);
    expect(await codes()).toContain(code);
  });

  it('refuses to pack with the code of the first problem, and a schema problem as PACK_MANIFEST_INVALID', async () => {
    write(stdio(['dist/index.js']));
    const r = await cli(dir, ['pack']);
    expect([r.code, r.err.split('\n')[0]]).toEqual([1, 'error PACK_HOST_STDIO_MISSING: 1 problem above, so no package was written']);
    write({ protocolVersion: 1 });
    expect((await cli(dir, ['pack'])).err).toMatch(/^error PACK_MANIFEST_INVALID: /);
  });

  it('reports a missing manifest, an HTTP plugin manifest and a missing package.json', async () => {
    expect((await cli(dir, ['validate'])).err).toMatch(/^error PACK_MANIFEST_MISSING: /);
    write({ transport: undefined, capabilities: 1 });
    expect((await cli(dir, ['pack'])).err).toMatch(/^error PACK_TRANSPORT_NOT_STDIO: /);
    write({});
    rmSync(join(dir, 'package.json'));
    expect((await cli(dir, ['pack'])).err).toMatch(/^error PACK_PACKAGE_JSON_MISSING: /);
  });

  it('refuses an include outside the project or missing, and an output folder it cannot write', async () => {
    write({});
    expect((await cli(dir, ['pack', '--include', '../elsewhere'])).err).toMatch(/^error PACK_INCLUDE_INVALID: /);
    expect((await cli(dir, ['pack', '--include', 'assets'])).err).toMatch(/^error PACK_INCLUDE_INVALID: /);
    writeFileSync(join(dir, 'a-file'), 'not a folder');
    const r = await cli(dir, ['pack', '--out', 'a-file/out']);
    expect([r.code, r.err.split('\n')[0]]).toEqual([1, expect.stringMatching(/^error PACK_OUTPUT_NOT_WRITABLE: cannot write /)]);
  });

  it('lists manifest schema problems with their protocol codes', async () => {
    write({ protocolVersion: 1, colour: 'red' });
    expect(await codes()).toEqual(['error manifest.protocolVersion.unsupported', 'error manifest.field.unknown']);
  });

  it('reports an SDK that is only a dev dependency, and production dependencies that are not installed', async () => {
    write({}, { devDependencies: { '@host/plugin-sdk-v2': '^2.0.0' }, dependencies: { 'not-installed': '^1.0.0' } });
    expect(await codes()).toEqual(['error PACK_SDK_NOT_A_DEPENDENCY', 'error PACK_DEPENDENCY_UNRESOLVED']);
  });

  it('reports a linked SDK checkout that was not built', async () => {
    write({});
    rmSync(join(dir, 'node_modules/@host/plugin-sdk-v2'));
    const fake = join(dir, 'sdk-checkout');
    mkdirSync(fake);
    writeFileSync(
      join(fake, 'package.json'),
      JSON.stringify({ name: '@host/plugin-sdk-v2', version: RELEASE_VERSIONS.sdkVersion, main: './dist/index.cjs' }),
    );
    symlinkSync(fake, join(dir, 'node_modules/@host/plugin-sdk-v2'), 'dir');
    expect(await codes()).toEqual(['error PACK_SDK_NOT_BUILT']);
  });
});

describe('dependency closure', () => {
  it('copies installed packages, nests a second version under its dependant, and skips links', async () => {
    const dir = mkdtempSync(join(work, 'deps-'));
    mkdirSync(join(dir, 'dist'));
    writeFileSync(join(dir, 'dist/index.js'), 'require("a")');
    const pkgAt = (path: string, json: Record<string, unknown>, files: Record<string, string> = {}) => {
      mkdirSync(join(dir, path), { recursive: true });
      writeFileSync(join(dir, path, 'package.json'), JSON.stringify(json));
      for (const [f, c] of Object.entries(files)) writeFileSync(join(dir, path, f), c);
    };
    pkgAt('node_modules/a', { name: 'a', version: '1.0.0', dependencies: { b: '^1.0.0' } }, { 'index.js': 'a' });
    pkgAt('node_modules/a/node_modules/b', { name: 'b', version: '1.0.0' }, { 'index.js': 'b1' });
    pkgAt('node_modules/b', { name: 'b', version: '2.0.0' }, { 'index.js': 'b2' });
    symlinkSync('index.js', join(dir, 'node_modules/b/alias.js'));
    pkgAt('node_modules/unused', { name: 'unused', version: '1.0.0' });
    mkdirSync(join(dir, 'node_modules/@host'), { recursive: true });
    symlinkSync(SDK, join(dir, 'node_modules/@host/plugin-sdk-v2'), 'dir');
    writeFileSync(
      join(dir, 'manifest.json'),
      JSON.stringify({
        pluginId: 'com.example.deps',
        name: 'D',
        version: '1.0.0',
        author: 'A',
        protocolVersion: 2,
        sdkVersion: RELEASE_VERSIONS.sdkVersion,
        transport: { type: 'stdio-jsonrpc', stdio: { command: 'node', args: ['dist/index.js', '--host-stdio'] } },
        eventSubscriptions: [{ eventType: 'message.created' }],
      }),
    );
    writeFileSync(
      join(dir, 'package.json'),
      JSON.stringify({
        name: 'd',
        dependencies: { a: '^1.0.0', b: '^2.0.0', '@host/plugin-sdk-v2': '^2.0.0' },
        devDependencies: { unused: '1' },
      }),
    );
    const r = await cli(dir, ['pack', '--out', 'out']);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/warn  PACK_LINK_SKIPPED: .*node_modules\/b\/alias.js/);
    const zip = new AdmZip(join(dir, 'out/com.example.deps.zip'));
    const text = (n: string) => zip.getEntry(n)?.getData().toString();
    expect([text('node_modules/a/index.js'), text('node_modules/b/index.js'), text('node_modules/a/node_modules/b/index.js')]).toEqual([
      'a',
      'b2',
      'b1',
    ]);
    const names = zip.getEntries().map((e) => e.entryName);
    expect(names.filter((n) => n.startsWith('node_modules/unused') || n.endsWith('alias.js'))).toEqual([]);
    expect(r.out).toMatch(/a@1\.0\.0\s+2 files/);
  });
});
