import { RELEASE_VERSIONS } from '@host/protocol';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

// Checks the package as users get it: what `npm pack` ships, that both module
// kinds load through the exports map, and that TypeScript consumers of both
// kinds typecheck against the shipped declarations. Needs the build (the
// test target depends on it).
const PKG = join(__dirname, '..');
const TSC = require.resolve('typescript/bin/tsc');

let dir: string;
beforeAll(() => {
  // In the workspace's tmp/ (ignored by git and lint) so the consumer finds
  // typescript and @types/node; the package itself is linked the way npm
  // links a workspace or a local path.
  mkdirSync(join(PKG, '../../tmp'), { recursive: true });
  dir = mkdtempSync(join(PKG, '../../tmp', 'plugin-sdk-consumer-'));
  mkdirSync(join(dir, 'node_modules/@host'), { recursive: true });
  symlinkSync(PKG, join(dir, 'node_modules/@host/plugin-sdk-v2'), 'dir');
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const node = (args: string[]) => execFileSync(process.execPath, args, { cwd: dir, encoding: 'utf8' });

describe('npm pack', () => {
  it('ships the builds, declarations, schema and README, and no sources', () => {
    const [report] = JSON.parse(
      execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: PKG, encoding: 'utf8' }),
    ) as [{ files: { path: string }[] }];
    const files = report.files.map((f) => f.path).sort();
    for (const f of ['README.md', 'package.json', 'schema/manifest.schema.json', 'dist/wire-types.d.ts', 'dist/wire-types.d.mts'])
      expect(files).toContain(f);
    for (const entry of ['index', 'http', 'testing']) {
      for (const ext of ['cjs', 'mjs', 'd.ts', 'd.mts']) expect(files).toContain(`dist/${entry}.${ext}`);
    }
    expect(files.filter((f) => !/^(dist|schema)\//.test(f) && !['README.md', 'package.json'].includes(f))).toEqual([]);
  });
});

describe('module kinds', () => {
  it('require() loads the CommonJS build and its subpaths', () => {
    const out = node([
      '-e',
      `const sdk = require('@host/plugin-sdk-v2');
       const { createTestHost } = require('@host/plugin-sdk-v2/testing');
       const { createHttpHandler } = require('@host/plugin-sdk-v2/http');
       const schema = require('@host/plugin-sdk-v2/manifest.schema.json');
       console.log(JSON.stringify([typeof sdk.definePlugin, sdk.SDK_VERSION, typeof createTestHost, typeof createHttpHandler, schema.title, require.resolve('@host/plugin-sdk-v2').endsWith('index.cjs')]));`,
    ]);
    expect(JSON.parse(out)).toEqual([
      'function',
      RELEASE_VERSIONS.sdkVersion,
      'function',
      'function',
      'Plugin manifest (stdio package)',
      true,
    ]);
  });

  it('import loads the ES module build, sharing classes across subpaths', () => {
    const out = node([
      '--input-type=module',
      '-e',
      `import { definePlugin, PluginMessageError, SDK_NAME } from '@host/plugin-sdk-v2';
       import { createTestHost } from '@host/plugin-sdk-v2/testing';
       const plugin = definePlugin({ pluginId: 'com.example.esm', async onMessage(ctx) {
         try { await ctx.replyMarkdown('x'); } catch (e) { ctx.log.info(String(e instanceof PluginMessageError)); }
       } });
       const { logs } = await createTestHost(plugin).send({ text: 'hi', conversation: 'c2c' });
       console.log(JSON.stringify([SDK_NAME, logs.map((l) => l.message).join(), import.meta.resolve('@host/plugin-sdk-v2').endsWith('index.mjs')]));`,
    ]);
    expect(JSON.parse(out)).toEqual(['@host/plugin-sdk-v2', 'true', true]);
  });
});

const CONSUMER = `
import { definePlugin, at, PluginMessageError, type MessageContext, type MessageErrorCode, type UserRef } from '@host/plugin-sdk-v2';
import { createTestHost } from '@host/plugin-sdk-v2/testing';
import { createHttpHandler, httpRouter, signRequest } from '@host/plugin-sdk-v2/http';

const plugin = definePlugin({
  manifest: { pluginId: 'com.example.consumer', name: 'C', version: '1.0.0', author: 'A', protocolVersion: 2, commands: [{ name: 'echo' }] },
  commands: {
    async echo(ctx: MessageContext) {
      const sender: UserRef = ctx.sender;
      await ctx.replyMarkdown(at.user(sender), ' ', ctx.args);
      await ctx.messages.group('g').sendMarkdown('hi');
      // @ts-expect-error Markdown goes only to groups, so user senders have no sendMarkdown.
      await ctx.messages.user('u').sendMarkdown('hi');
    },
  },
});

export async function check(): Promise<string> {
  const { replies, ack } = await createTestHost(plugin).send('/echo hi');
  const code: MessageErrorCode = 'message.format.unsupported_target';
  const e = new PluginMessageError(code);
  const handler = createHttpHandler(plugin, { secret: 's' });
  const router = httpRouter(plugin, { secret: 's' });
  const headers: Record<string, string> = signRequest('s', '{}');
  return [replies[0]?.content, ack.accepted, e.code, typeof handler, typeof router, headers['x-host-signature']].join();
}
`;

describe('TypeScript consumers', () => {
  it.each([
    ['CommonJS and ES module (node16)', ['consumer.cts', 'consumer.mts'], { module: 'node16', moduleResolution: 'node16' }],
    ['bundler', ['consumer.ts'], { module: 'esnext', moduleResolution: 'bundler' }],
  ])('%s code typechecks against the shipped declarations', (name, files, resolution) => {
    const project = join(dir, name.replace(/\W+/g, '-'));
    mkdirSync(project, { recursive: true });
    for (const file of files) writeFileSync(join(project, file), CONSUMER);
    writeFileSync(
      join(project, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: { ...resolution, target: 'es2022', strict: true, noEmit: true, skipLibCheck: false, types: ['node'] },
        files,
      }),
    );
    try {
      execFileSync(process.execPath, [TSC, '-p', project], { cwd: project, encoding: 'utf8' });
    } catch (error) {
      throw new Error(`tsc reported:\n${(error as { stdout?: string }).stdout ?? String(error)}`);
    }
  });
});
