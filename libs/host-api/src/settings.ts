import { HostError, type PluginRecord, type RegistryStore, type SettingsStore, type SettingsValues } from '@host/host-core';
import type { ConfigField, ValidationIssue } from '@host/protocol';

type Value = string | number | boolean;
export type StoredSettings = SettingsValues;

/**
 * A key's own value. Keys come from request bodies and manifests, so a plain
 * `obj[key]` would find inherited members ("constructor", "toString") and
 * take them for declared fields or stored values.
 */
function own<T>(obj: Record<string, T>, key: string): T | undefined {
  return Object.hasOwn(obj, key) ? obj[key] : undefined;
}

function schemaOf(record: PluginRecord): Record<string, ConfigField> {
  return (record.manifest.settings?.configSchema ?? {}) as Record<string, ConfigField>;
}

/** Current values for display: defaults where unset, secrets as `{set}` only. */
export function publicSettings(record: PluginRecord, stored: StoredSettings): Record<string, Value | null | { set: boolean }> {
  const out: Record<string, Value | null | { set: boolean }> = {};
  for (const [key, field] of Object.entries(schemaOf(record))) {
    const value = own(stored, key);
    if (field.type === 'secret') out[key] = { set: typeof value === 'string' && value !== '' };
    else out[key] = value ?? field.defaultValue ?? null;
  }
  return out;
}

/**
 * The values a plugin receives in host.initialize: stored values, secrets
 * included, and each declared field's defaultValue where nothing is stored
 * (docs/protocol/v2.md, 2.2). Stored keys the manifest no longer declares are
 * not sent.
 */
export function effectiveSettings(record: PluginRecord, stored: StoredSettings): StoredSettings {
  const out: StoredSettings = {};
  for (const [key, field] of Object.entries(schemaOf(record))) {
    const value = own(stored, key) ?? field.defaultValue;
    if (value !== undefined) out[key] = value;
  }
  return out;
}

function checkValue(key: string, field: ConfigField, value: Value): string | undefined {
  switch (field.type) {
    case 'number':
      if (typeof value !== 'number' || !Number.isFinite(value)) return `must be a number`;
      if (field.min !== undefined && value < field.min) return `must be at least ${field.min}`;
      if (field.max !== undefined && value > field.max) return `must be at most ${field.max}`;
      return undefined;
    case 'boolean':
      return typeof value === 'boolean' ? undefined : 'must be true or false';
    case 'select':
      if (typeof value !== 'string' || !(field.options ?? []).some((o) => o.value === value)) {
        return `must be one of ${(field.options ?? []).map((o) => JSON.stringify(o.value)).join(', ')}`;
      }
      return undefined;
    default:
      if (typeof value !== 'string') return 'must be a string';
      if (field.min !== undefined && value.length < field.min) return `must be at least ${field.min} characters`;
      if (field.max !== undefined && value.length > field.max) return `must be at most ${field.max} characters`;
      return /[\u0000]/.test(value) ? `must not contain NUL characters (${key})` : undefined;
  }
}

/**
 * The values of `getSettings` for host.initialize, with manifest defaults;
 * what the stdio runtime is given as its `settings` option.
 */
export function settingsForInitialize(
  registry: Pick<RegistryStore, 'get'>,
  settings: Pick<SettingsStore, 'get'>,
): (pluginId: string) => Promise<StoredSettings> {
  return async (pluginId) => {
    const [record, stored] = await Promise.all([registry.get(pluginId), settings.get(pluginId)]);
    return record ? effectiveSettings(record, stored) : stored;
  };
}

/**
 * Applies a settings change to the stored values: unknown keys and wrong
 * values are refused (SETTINGS_INVALID) with every issue listed; a blank or
 * null secret keeps the stored secret; null clears other fields; omitted
 * fields keep their value. Pure, so it can run inside `SettingsStore.update`.
 */
export function applySettingsChanges(record: PluginRecord, current: StoredSettings, changes: Record<string, Value | null>): StoredSettings {
  const schema = schemaOf(record);
  const next: StoredSettings = { ...current };
  const issues: ValidationIssue[] = [];
  for (const [key, value] of Object.entries(changes)) {
    const field = own(schema, key);
    if (!field) {
      issues.push({
        code: 'settings.field.unknown',
        path: key,
        message: `"${key}" is not a setting of this plugin (see settings.configSchema).`,
      });
      continue;
    }
    if (field.type === 'secret' && (value === null || value === '')) continue;
    if (value === null) {
      delete next[key];
      continue;
    }
    const problem = checkValue(key, field, value);
    if (problem) issues.push({ code: 'settings.field.invalid', path: key, message: `"${key}" (${field.label}) ${problem}.` });
    else next[key] = value;
  }
  for (const [key, field] of Object.entries(schema)) {
    if (field.required && own(next, key) === undefined && field.defaultValue === undefined) {
      issues.push({ code: 'settings.field.required', path: key, message: `"${key}" (${field.label}) is required: enter a value.` });
    }
  }
  // Keys no longer in the schema (after an update) are dropped on the next save.
  for (const key of Object.keys(next)) if (!own(schema, key)) delete next[key];
  if (issues.length) {
    throw new HostError(
      'SETTINGS_INVALID',
      `The settings are not valid: ${issues[0]!.message}${issues.length > 1 ? ` (and ${issues.length - 1} more)` : ''}`,
      { issues },
    );
  }
  return next;
}

/** Whether two stored settings hold the same values, whatever the order of their keys. */
export function sameValues(a: StoredSettings, b: StoredSettings): boolean {
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((k) => Object.hasOwn(b, k) && Object.is(a[k], b[k]));
}
