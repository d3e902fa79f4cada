import { parseHttpManifest, parseStdioManifest } from './index';

const base = {
  pluginId: 'com.example.echo',
  name: 'Echo',
  version: '1.0.0',
  author: 'Example',
  protocolVersion: 2,
  sdkVersion: '2.0.0',
  transport: { type: 'stdio-jsonrpc', stdio: { command: 'node', args: ['dist/index.js', '--host-stdio'], workingDirectory: '.' } },
  eventSubscriptions: [{ eventType: 'message.created' }],
  permissions: ['messages.reply'],
  commands: [{ name: 'echo', prefixes: ['/'], priority: 10 }],
};

describe('stdio manifest', () => {
  it('accepts the contract example and applies defaults', () => {
    const r = parseStdioManifest(base);
    expect(r.ok).toBe(true);
    if (r.ok) expect(r.value.commands[0]?.aliases).toEqual([]);
  });

  it('points an HTTP manifest to Register HTTP plugin', () => {
    const r = parseStdioManifest({ ...base, transport: { type: 'http' } });
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.issues[0]?.code).toBe('manifest.transport.unsupported');
      expect(r.issues[0]?.message).toMatch(/Register HTTP plugin/);
    }
  });

  it('names the field and the fix for a missing field', () => {
    const { name: _n, ...rest } = base;
    const r = parseStdioManifest(rest);
    expect(r).toEqual({
      ok: false,
      issues: [{ code: 'manifest.field.required', path: 'name', message: expect.stringMatching(/"name" is required/) }],
    });
  });
});

describe('http manifest', () => {
  it('requires capabilities 1 and 8', () => {
    const r = parseHttpManifest({
      pluginId: 'com.example.h',
      name: 'H',
      version: '1.0.0',
      author: 'A',
      protocolVersion: 2,
      capabilities: 1,
    });
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.issues.map((i) => i.code)).toEqual(['manifest.capabilities.missing']);
  });
});
