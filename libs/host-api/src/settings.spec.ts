import { hostPaths, type HostError, type HostPaths, type StdioPluginRecord } from '@host/host-core';
import { parseStdioManifest } from '@host/protocol';
import { testManifest } from '@host/host-installer/testing';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FileSettingsStore, settingsFile } from '@host/host-store';
import { applySettingsChanges, effectiveSettings, publicSettings, type StoredSettings } from './settings';

function record(configSchema: Record<string, unknown>): StdioPluginRecord {
  const parsed = parseStdioManifest(testManifest({ settings: { configSchema } }));
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.issues));
  const now = new Date().toISOString();
  return {
    pluginId: parsed.value.pluginId,
    transport: 'stdio-jsonrpc',
    manifest: parsed.value,
    packageSha256: '',
    installedAt: now,
    updatedAt: now,
    enabled: false,
  };
}

describe('settings', () => {
  let dataDir: string;
  let paths: HostPaths;
  beforeEach(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'settings-'));
    paths = hostPaths(dataDir);
  });
  afterEach(() => rmSync(dataDir, { recursive: true, force: true }));

  const updateSettings = (p: HostPaths, r: StdioPluginRecord, changes: Record<string, StoredSettings[string] | null>) =>
    new FileSettingsStore(p).update(r.pluginId, (current) => applySettingsChanges(r, current, changes));
  const failure = (p: Promise<unknown>) =>
    p.then(
      () => undefined,
      (e: unknown) => e as HostError,
    );

  // Names every object inherits ("constructor", "toString"...) are not settings unless the manifest declares them.
  it('refuses keys that are only inherited object properties', async () => {
    const r = record({ mode: { type: 'string', label: 'Mode' } });
    const err = await failure(updateSettings(paths, r, { constructor: 'x', toString: 'y', mode: 'fast' }));
    expect(err?.code).toBe('SETTINGS_INVALID');
    expect((err?.details?.issues ?? []).map((i) => [i.code, i.path])).toEqual([
      ['settings.field.unknown', 'constructor'],
      ['settings.field.unknown', 'toString'],
    ]);
  });

  it('treats a declared field named like an object property as unset until a value is saved', async () => {
    const r = record({ toString: { type: 'string', label: 'Text', required: true }, valueOf: { type: 'number', label: 'Value' } });
    expect(publicSettings(r, {})).toEqual({ toString: null, valueOf: null });
    const err = await failure(updateSettings(paths, r, {}));
    expect((err?.details as { issues: { code: string; path: string }[] } | undefined)?.issues.map((i) => [i.code, i.path])).toEqual([
      ['settings.field.required', 'toString'],
    ]);
    await updateSettings(paths, r, { toString: 'hello' });
    expect(JSON.parse(readFileSync(settingsFile(paths, r.pluginId), 'utf8'))).toEqual({ values: { toString: 'hello' } });
  });

  it('gives the plugin stored values, secrets included, and defaults for the rest', () => {
    const r = record({
      greeting: { type: 'string', label: 'Greeting', defaultValue: 'hello' },
      loud: { type: 'boolean', label: 'Loud', defaultValue: false },
      apiKey: { type: 'secret', label: 'API key' },
      limit: { type: 'number', label: 'Limit' },
    });
    expect(effectiveSettings(r, { apiKey: 's3cret', loud: true, removedField: 'x' })).toEqual({
      greeting: 'hello',
      loud: true,
      apiKey: 's3cret',
    });
  });
});
