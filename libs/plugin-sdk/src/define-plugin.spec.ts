import { Capability, PERMISSIONS } from '@host/protocol';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { echoManifest } from './manifests.spec-helper';
import { definePlugin } from './define-plugin';
import { PluginSdkError } from './errors';
import { readManifest } from './read-manifest';
import { SDK_NAME, SDK_VERSION } from './version';

function sdkError(run: () => unknown): PluginSdkError {
  try {
    run();
  } catch (error) {
    if (error instanceof PluginSdkError) return error;
    throw error;
  }
  throw new Error('expected a PluginSdkError');
}

describe('definePlugin', () => {
  it('takes the id and validated manifest (defaults applied) from manifest.json', () => {
    const plugin = definePlugin({ manifest: echoManifest, commands: { echo: async () => undefined } });
    expect(plugin.pluginId).toBe('com.example.echo');
    expect(plugin.manifest?.commands[0]).toMatchObject({ name: 'echo', aliases: ['e'], priority: 10 });
    expect(Object.isFrozen(plugin)).toBe(true);
  });

  it('accepts only a pluginId, but then cannot serve an HTTP manifest', () => {
    const plugin = definePlugin({ pluginId: 'com.example.bare', onMessage: () => undefined });
    expect(plugin.manifest).toBeUndefined();
    expect(sdkError(() => plugin.httpManifest()).code).toBe('SDK_HTTP_CONFIG_INVALID');
  });

  it('says what to give when neither manifest nor pluginId is there', () => {
    const e = sdkError(() => definePlugin({ onMessage: () => undefined }));
    expect(e.code).toBe('SDK_DEFINITION_INVALID');
    expect(e.message).toMatch(/give "manifest".*or "pluginId"/);
  });

  it('refuses an invalid plugin id with the rule', () => {
    expect(sdkError(() => definePlugin({ pluginId: 'Echo' })).message).toMatch(/lowercase dotted identifier/);
  });

  it('lists every manifest problem with its protocol code and path', () => {
    const e = sdkError(() => definePlugin({ manifest: { ...echoManifest, protocolVersion: 3, permission: ['messages.reply'] } }));
    expect(e.code).toBe('SDK_MANIFEST_INVALID');
    expect(e.issues.map((i) => [i.code, i.path])).toEqual([
      ['manifest.protocolVersion.unsupported', 'protocolVersion'],
      ['manifest.field.unknown', 'permission'],
    ]);
    expect(e.message).toMatch(/protocolVersion/);
  });

  it('refuses a pluginId that contradicts the manifest', () => {
    expect(
      sdkError(() => definePlugin({ manifest: echoManifest, pluginId: 'com.example.other', commands: { echo: () => undefined } })).message,
    ).toMatch(/"com.example.other" but the manifest says "com.example.echo"/);
  });

  it('points a handler keyed by an alias to the command name', () => {
    const e = sdkError(() => definePlugin({ manifest: echoManifest, commands: { e: () => undefined } }));
    expect(e.message).toMatch(/use commands\["echo"\]/);
  });

  it('names the manifest entry to add for a handler without a command', () => {
    const e = sdkError(() =>
      definePlugin({ manifest: echoManifest, onMessage: () => undefined, commands: { echo: () => undefined, ping: () => undefined } }),
    );
    expect(e.message).toMatch(/add \{"name": "ping", "prefixes": \["\/"\]\}/);
  });

  it('refuses a manifest command that nothing handles', () => {
    expect(sdkError(() => definePlugin({ manifest: echoManifest })).message).toMatch(/"echo" have no handler/);
  });

  it('refuses handlers that are not functions', () => {
    expect(sdkError(() => definePlugin({ pluginId: 'com.example.x', onMessage: 'nope' as never })).message).toMatch(
      /"onMessage" must be a function/,
    );
    expect(sdkError(() => definePlugin({ pluginId: 'com.example.x', commands: { a: 1 as never } })).message).toMatch(
      /commands.a must be a function/,
    );
  });
});

describe('HTTP manifest', () => {
  it('is built from the stdio manifest with computed capabilities', () => {
    const plugin = definePlugin({ manifest: echoManifest, commands: { echo: () => undefined } });
    const m = plugin.httpManifest();
    expect(m).toMatchObject({
      pluginId: 'com.example.echo',
      name: 'Echo',
      version: '1.2.3',
      protocolVersion: 2,
      sdkVersion: SDK_VERSION,
      capabilities: 9,
    });
    expect(m).not.toHaveProperty('transport');
  });

  it('adds InterceptMessages for intercepting plugins and SendMessages for messages.send', () => {
    const plugin = definePlugin({
      manifest: { ...echoManifest, permissions: ['messages.reply', 'messages.send', 'messages.intercept'] },
      intercepts: true,
      commands: { echo: () => undefined },
    });
    expect(plugin.httpManifest().capabilities).toBe(
      Capability.ReceiveMessages | Capability.HttpTransport | Capability.InterceptMessages | Capability.SendMessages,
    );
  });

  it('refuses intercepts: true when the stdio manifest lacks messages.intercept', () => {
    expect(() => definePlugin({ manifest: echoManifest, intercepts: true, commands: { echo: () => undefined } })).toThrow(
      expect.objectContaining({
        code: 'SDK_INTERCEPT_PERMISSION_MISSING',
        message: expect.stringMatching(/does not declare "messages.intercept"; add it to "permissions"/),
      }),
    );
  });

  it('accepts an HTTP-only manifest without transport', () => {
    const plugin = definePlugin({
      manifest: { pluginId: 'com.example.web', name: 'Web', version: '1.0.0', author: 'A', protocolVersion: 2 },
      onMessage: () => undefined,
    });
    expect(plugin.httpManifest()).toMatchObject({
      capabilities: 9,
      permissions: ['messages.reply'],
      eventSubscriptions: [{ eventType: 'message.created' }],
    });
  });
});

describe('package identity', () => {
  it('SDK_NAME and SDK_VERSION match package.json', () => {
    const pkg = JSON.parse(readFileSync(join(__dirname, '..', 'package.json'), 'utf8'));
    expect([SDK_NAME, SDK_VERSION]).toEqual([pkg.name, pkg.version]);
  });

  it('knows every permission the protocol defines', () => {
    expect(Object.keys(PERMISSIONS)).toContain('messages.mentionEveryone');
  });
});

describe('readManifest', () => {
  let dir: string;
  beforeAll(() => (dir = mkdtempSync(join(tmpdir(), 'sdk-manifest-'))));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('reads manifest.json (with a byte order mark) for definePlugin, by path or URL', () => {
    const file = join(dir, 'manifest.json');
    writeFileSync(file, `\ufeff${JSON.stringify(echoManifest)}`);
    expect(definePlugin({ manifest: readManifest(file), commands: { echo: () => undefined } }).pluginId).toBe('com.example.echo');
    expect(readManifest(new URL(`file://${file}`)).pluginId).toBe('com.example.echo');
  });

  it('names the file and the fix when it is missing or not JSON', () => {
    expect(sdkError(() => readManifest(join(dir, 'nope.json'))).message).toMatch(/nope\.json \(ENOENT\).*package root/);
    writeFileSync(join(dir, 'bad.json'), '{"pluginId": ');
    const e = sdkError(() => readManifest(join(dir, 'bad.json')));
    expect([e.code, e.issues[0]?.code]).toEqual(['SDK_MANIFEST_INVALID', 'manifest.json.invalid']);
  });
});
