import { parseStdioManifest } from '@host/protocol';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { createTestHost } from '@host/plugin-sdk-v2/testing';
import { nodePackageName, projectFiles } from './templates';

describe('init templates', () => {
  const files = projectFiles({
    pluginId: 'com.acme.greeter',
    name: 'Greeter',
    author: 'Acme',
    description: 'Greets.',
    sdk: '^2.0.0',
    cli: '^2.0.0',
  });

  it('writes a complete TypeScript project', () => {
    expect([...files.keys()].sort()).toEqual([
      '.gitignore',
      'README.md',
      'jest.config.js',
      'manifest.json',
      'package.json',
      'src/index.ts',
      'src/plugin.spec.ts',
      'src/plugin.ts',
      'tsconfig.build.json',
      'tsconfig.json',
    ]);
  });

  it('writes a valid manifest whose $schema is the file shipped in the SDK package', () => {
    const manifest = JSON.parse(files.get('manifest.json') as string);
    expect(parseStdioManifest(manifest)).toMatchObject({ ok: true });
    expect(manifest.transport.stdio.args).toEqual(['dist/index.js', '--host-stdio']);
    expect(manifest.$schema).toBe('./node_modules/@host/plugin-sdk-v2/schema/manifest.schema.json');
    // The SDK build ships the schema at that path (package.json "files" has schema/).
    expect(existsSync(join(__dirname, '../../../libs/plugin-sdk/schema/manifest.schema.json'))).toBe(true);
  });

  it('has the SDK as a production dependency and scripts to build, test, validate and pack', () => {
    const pkg = JSON.parse(files.get('package.json') as string);
    expect(pkg.dependencies).toEqual({ '@host/plugin-sdk-v2': '^2.0.0' });
    expect(Object.keys(pkg.scripts)).toEqual(expect.arrayContaining(['build', 'test', 'validate', 'pack', 'notes']));
    expect(pkg.scripts.pack).toBe('npm run build && host-plugin pack');
  });

  it('names the package after the plugin id, adding "-plugin" only where the id does not say it', () => {
    expect(JSON.parse(files.get('package.json') as string).name).toBe('greeter-plugin');
    expect(nodePackageName('com.example.my-plugin')).toBe('my-plugin');
    expect(nodePackageName('com.example.plugin')).toBe('plugin');
    expect(nodePackageName('com.example.weather')).toBe('weather-plugin');
    expect(nodePackageName('com.example.unplugin')).toBe('unplugin-plugin');
  });
});

describe('init --intercepts', () => {
  const ROOT = join(__dirname, '../../..');
  const options = { pluginId: 'com.acme.gate', name: 'Gate', author: 'Acme', description: 'Gates.', sdk: '^2.0.0', cli: '^2.0.0' };
  let dir: string;

  beforeAll(() => {
    // Inside the workspace, so the generated sources resolve the SDK from it.
    mkdirSync(join(ROOT, 'tmp'), { recursive: true });
    dir = mkdtempSync(join(ROOT, 'tmp', 'init-intercepts-'));
    for (const [path, content] of projectFiles({ ...options, intercepts: true })) {
      mkdirSync(dirname(join(dir, path)), { recursive: true });
      writeFileSync(join(dir, path), content);
    }
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('declares messages.intercept only when asked', () => {
    expect(JSON.parse(projectFiles(options).get('manifest.json') as string).permissions).toEqual(['messages.reply']);
    const manifest = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8'));
    expect(manifest.permissions).toEqual(['messages.reply', 'messages.intercept']);
    expect(parseStdioManifest(manifest)).toMatchObject({ ok: true });
  });

  it('gives a plugin whose command intercepts, as its own generated test expects', async () => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const plugin = require(join(dir, 'src/plugin.ts')).default;
    const host = createTestHost(plugin);
    const { ack, replies } = await host.send({ text: '/echo hello', sender: { mentionId: 'user-1', displayName: 'Ann' } });
    expect([ack.accepted, ack.intercepted, replies.length]).toEqual([true, true, 1]);
    expect(await host.send('just chatting')).toMatchObject({ ack: { accepted: false, intercepted: false } });
    expect(readFileSync(join(dir, 'src/plugin.spec.ts'), 'utf8')).toContain('expect(ack.intercepted).toBe(true);');
  });

  it('gives a plugin that replies to /cat with an image and answers a click on a /vote button, as its own test expects', async () => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { default: plugin, CAT_URL } = require(join(dir, 'src/plugin.ts'));
    expect(JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')).eventSubscriptions).toContainEqual({
      eventType: 'interaction.created',
    });
    const host = createTestHost(plugin);
    expect((await host.send('/cat')).replies[0]!.body).toMatchObject({ msg_type: 7, media: { url: CAT_URL } });
    const asked = await host.send('/vote');
    const button = (
      asked.replies[0]!.body as { keyboard: { content: { rows: { buttons: { id: string; action: { data: string } }[] }[] } } }
    ).keyboard.content.rows[0]!.buttons[0]!;
    const clicked = await host.click(button.action.data, { buttonId: button.id, senderId: 'user-1' });
    expect(clicked.replies.map((r) => r.body)).toEqual([
      { msg_type: 2, markdown: { content: '<qqbot-at-user id="user-1" /> voted **yes**' } },
    ]);
  });
});
