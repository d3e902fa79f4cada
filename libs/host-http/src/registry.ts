import { findCommandConflicts, type CommandConflict } from '@host/host-dispatch';
import { RegisterHttpPluginSchema, type RegisterHttpPluginInput, type UpdateChanges } from '@host/admin-api';
import {
  HostError,
  KeyedLock,
  type HttpPluginRecord,
  type PluginEndpoint,
  type PluginLock,
  type PluginRecord,
  type RegistryStore,
  type RuntimeStatus,
} from '@host/host-core';
import { badRequest } from '@host/host-routes';
import { capabilityNames, type CapabilityName, type HttpManifest } from '@host/protocol';
import { parseBaseUrl } from './base-url';
import { HttpPluginEndpoint, type HttpEndpointOptions } from './endpoint';
import type { HttpPluginHealth } from './health';
import { fetchHttpManifest } from './manifest-fetch';
import { diffHttpManifests, escalates, manifestSha256 } from './manifest-diff';
import { generateSigningSecret } from './signing';

/**
 * Where live endpoints go so the dispatcher routes events to them. A
 * `Map<string, PluginEndpoint>` fits; so does any registry with these two.
 */
export interface EndpointRegistry {
  set(pluginId: string, endpoint: PluginEndpoint): unknown;
  delete(pluginId: string): unknown;
}

export interface HttpPluginRegistryDeps extends HttpEndpointOptions {
  store: RegistryStore;
  /**
   * The host-wide lock per plugin id. Pass the one the installer and the admin
   * API use, so a registration and an upload of one id never interleave.
   * Default: a lock of this registry's own.
   */
  locks?: PluginLock;
  /** Told about every endpoint that goes live or away; optional when the dispatcher reads `liveEndpoints()`. */
  endpoints?: EndpointRegistry;
  /** Deadline for a manifest fetch at registration and refresh. Default HTTP_DEFAULTS.requestTimeoutMilliseconds. */
  manifestTimeoutMilliseconds?: number;
}

// The body of `POST /plugins/http` is part of the admin API's contract.
export { RegisterHttpPluginSchema, type RegisterHttpPluginInput };

/** What the API shows of an HTTP plugin. The signing secret is never part of it. */
export interface HttpPluginView {
  pluginId: string;
  transport: 'http';
  baseUrl: string;
  name: string;
  version: string;
  author: string;
  description?: string;
  capabilities: number;
  capabilityNames: CapabilityName[];
  enabled: boolean;
  state: 'running' | 'stopped';
  installedAt: string;
  updatedAt: string;
  requestTimeoutMilliseconds?: number;
  manifest: HttpManifest;
  /** null while disabled (no deliveries are made). */
  health: HttpPluginHealth | null;
}

export interface RegisterResult {
  plugin: HttpPluginView;
  /** Shown once: configure the plugin with it to verify the host's signature. */
  signingSecret: string;
}

export interface RefreshResult {
  plugin: HttpPluginView;
  previousVersion: string;
  /** True when the stored manifest was replaced by the fetched one. */
  changed: boolean;
  /** The fetched manifest compared with the stored one, in the shape of a package update's diff. */
  changes: UpdateChanges;
  /** The fetched manifest adds capabilities, permissions, subscriptions or commands: nothing was stored. */
  confirmationRequired: boolean;
  /** While confirmationRequired: the manifest and the SHA-256 a confirmation names. */
  incoming?: { manifest: HttpManifest; sha256: string };
}

/**
 * Registration and lifecycle of HTTP plugins: register by base URL, refresh,
 * enable, disable, remove. Records go to the shared RegistryStore (one id
 * space with stdio plugins); enabled plugins get a live endpoint. Each change
 * holds the plugin's lock from its check to its endpoint going live or away;
 * network fetches stay outside it.
 */
export class HttpPluginRegistry {
  private readonly live = new Map<string, HttpPluginEndpoint>();
  private healthTimer: NodeJS.Timeout | undefined;
  private readonly locks: PluginLock;

  constructor(private readonly deps: HttpPluginRegistryDeps) {
    this.locks = deps.locks ?? new KeyedLock();
  }

  /** Creates endpoints for the enabled HTTP plugins in the store (host start). */
  async load(): Promise<void> {
    for (const record of await this.deps.store.list()) {
      if (record.transport === 'http' && record.enabled) this.attach(record);
    }
  }

  async register(input: RegisterHttpPluginInput): Promise<RegisterResult> {
    const parsed = RegisterHttpPluginSchema.safeParse(input);
    if (!parsed.success) throw badRequest(parsed.error, 'registration request');
    const base = parseBaseUrl(parsed.data.baseUrl);
    // The secret exists before the first fetch so even that request is signed.
    const signingSecret = generateSigningSecret();
    const manifest = await fetchHttpManifest(base.href, { ...this.networkOptions(), signingSecret });
    return this.locks.run(manifest.pluginId, async () => {
      const now = new Date().toISOString();
      const record: HttpPluginRecord = {
        transport: 'http',
        pluginId: manifest.pluginId,
        manifest,
        baseUrl: base.href,
        signingSecret,
        installedAt: now,
        updatedAt: now,
        enabled: parsed.data.enabled,
        ...(parsed.data.requestTimeoutMilliseconds === undefined
          ? {}
          : { requestTimeoutMilliseconds: parsed.data.requestTimeoutMilliseconds }),
      };
      const existing = await this.deps.store.putIfAbsent(record);
      if (existing) {
        const where = existing.transport === 'http' ? `an HTTP plugin registered at ${existing.baseUrl}` : 'an installed stdio plugin';
        throw new HostError(
          'REGISTRATION_ID_TAKEN',
          `pluginId ${manifest.pluginId} is already used by ${where}. Remove it first, or refresh it if it is this service.`,
          {
            pluginId: manifest.pluginId,
            transport: existing.transport,
          },
        );
      }
      if (record.enabled) this.attach(record);
      return { plugin: this.view(record), signingSecret };
    });
  }

  /**
   * Fetches the manifest again; the plugin's own deployment may have changed
   * it. A manifest that adds capabilities, permissions, subscriptions or
   * commands is not stored: the answer shows the diff and the operator
   * confirms it with confirmRefresh.
   */
  async refresh(pluginId: string): Promise<RefreshResult> {
    const record = await this.httpRecord(pluginId);
    const manifest = await this.fetchSameId(record, pluginId);
    const changes = diffHttpManifests(record.manifest, manifest);
    if (escalates(changes)) {
      return {
        plugin: this.view(record),
        previousVersion: record.manifest.version,
        changed: false,
        changes,
        confirmationRequired: true,
        incoming: { manifest, sha256: manifestSha256(manifest) },
      };
    }
    return this.store(pluginId, manifest);
  }

  /** Stores a refreshed manifest the operator reviewed: only when it is still the one with `sha256`. */
  async confirmRefresh(pluginId: string, sha256: string): Promise<RefreshResult> {
    const record = await this.httpRecord(pluginId);
    const manifest = await this.fetchSameId(record, pluginId);
    if (manifestSha256(manifest) !== sha256) {
      throw new HostError(
        'PLUGIN_STATE_CONFLICT',
        `The manifest of ${pluginId} is no longer the one that was reviewed. Refresh again and review the new changes.`,
        { pluginId },
      );
    }
    return this.store(pluginId, manifest);
  }

  private async fetchSameId(record: HttpPluginRecord, pluginId: string): Promise<HttpManifest> {
    const manifest = await fetchHttpManifest(record.baseUrl, { ...this.networkOptions(), signingSecret: record.signingSecret, pluginId });
    if (manifest.pluginId !== pluginId) {
      throw new HostError(
        'REGISTRATION_MANIFEST_INVALID',
        `The service at ${record.baseUrl} now reports pluginId ${manifest.pluginId}, but it was registered as ${pluginId}. A pluginId must stay the same; register the new id separately.`,
        {
          issues: [
            {
              code: 'manifest.pluginId.invalid',
              path: 'pluginId',
              message: `"pluginId" changed from ${pluginId} to ${manifest.pluginId}.`,
            },
          ],
        },
      );
    }
    return manifest;
  }

  private store(pluginId: string, manifest: HttpManifest): Promise<RefreshResult> {
    return this.locks.run(pluginId, async () => {
      const now = new Date().toISOString();
      let previous: HttpManifest | undefined;
      let changed = false;
      const stored = await this.deps.store.update(pluginId, (current) => {
        if (current.transport !== 'http') return undefined;
        previous = current.manifest as HttpManifest;
        changed = JSON.stringify(current.manifest) !== JSON.stringify(manifest);
        return changed ? { ...current, manifest, updatedAt: now } : undefined;
      });
      const updated = this.asHttpRecord(pluginId, stored);
      this.live.get(pluginId)?.update(updated);
      const before = previous ?? updated.manifest;
      return {
        plugin: this.view(updated),
        previousVersion: before.version,
        changed,
        changes: diffHttpManifests(before, manifest),
        confirmationRequired: false,
      };
    });
  }

  async enable(pluginId: string): Promise<HttpPluginView> {
    return this.setEnabled(pluginId, true);
  }

  async disable(pluginId: string): Promise<HttpPluginView> {
    return this.setEnabled(pluginId, false);
  }

  /** Unregisters the plugin. Its service keeps running; the host just stops calling it. */
  async remove(pluginId: string): Promise<void> {
    await this.locks.run(pluginId, async () => {
      await this.httpRecord(pluginId);
      await this.detach(pluginId);
      await this.deps.store.delete(pluginId);
    });
  }

  async get(pluginId: string): Promise<HttpPluginView> {
    return this.view(await this.httpRecord(pluginId));
  }

  async list(): Promise<HttpPluginView[]> {
    const records = await this.deps.store.list();
    return records.filter((r): r is HttpPluginRecord => r.transport === 'http').map((r) => this.view(r));
  }

  /** The commands of `pluginId` that another registered plugin answers too. */
  async commandConflicts(pluginId: string): Promise<CommandConflict[]> {
    const records = await this.deps.store.list();
    const owners = records.map((r) => ({ pluginId: r.pluginId, commands: r.manifest.commands }));
    const own = owners.find((o) => o.pluginId === pluginId);
    return own ? findCommandConflicts(own, owners) : [];
  }

  health(pluginId: string): HttpPluginHealth | undefined {
    return this.live.get(pluginId)?.health();
  }

  /** The plugins API's runtime view of an HTTP plugin: running (enabled) or stopped, with its health. */
  status(record: HttpPluginRecord): RuntimeStatus {
    const health = this.live.get(record.pluginId)?.health();
    return {
      state: record.enabled ? 'running' : 'stopped',
      crashCount: 0,
      ...(health
        ? { health: health.status, ...(health.lastError ? { lastError: `${health.lastError.code}: ${health.lastError.message}` } : {}) }
        : {}),
    };
  }

  endpoint(pluginId: string): HttpPluginEndpoint | undefined {
    return this.live.get(pluginId);
  }

  /** The endpoints of enabled HTTP plugins, e.g. for `Dispatcher({ endpoints: () => [...] })`. */
  liveEndpoints(): HttpPluginEndpoint[] {
    return [...this.live.values()];
  }

  /** Runs a health check of every enabled plugin every `intervalMilliseconds` (off unless started). */
  startHealthChecks(intervalMilliseconds: number): void {
    this.stopHealthChecks();
    const checking = new Set<HttpPluginEndpoint>();
    this.healthTimer = setInterval(() => {
      for (const endpoint of this.live.values()) {
        // A check still waiting for a slow plugin is not doubled up.
        if (checking.has(endpoint)) continue;
        checking.add(endpoint);
        void endpoint.checkHealth().finally(() => checking.delete(endpoint));
      }
    }, intervalMilliseconds);
    this.healthTimer.unref();
  }

  stopHealthChecks(): void {
    if (this.healthTimer) clearInterval(this.healthTimer);
    this.healthTimer = undefined;
  }

  /**
   * Brings this host's endpoint of `pluginId` in line with the stored record
   * after another host sharing the store changed it (registered, refreshed,
   * enabled, disabled or removed the plugin): attaches, updates or detaches.
   */
  async sync(pluginId: string): Promise<void> {
    await this.locks.run(pluginId, async () => {
      const record = await this.deps.store.get(pluginId);
      const endpoint = this.live.get(pluginId);
      if (!record || record.transport !== 'http' || !record.enabled) return this.detach(pluginId);
      if (!endpoint) return this.attach(record);
      const was = endpoint.current;
      if (was.baseUrl === record.baseUrl && was.signingSecret === record.signingSecret) return endpoint.update(record);
      // Another service or another secret: a new endpoint with its own connections.
      await this.detach(pluginId);
      this.attach(record);
    });
  }

  /** Stops health checks and closes every connection pool (host shutdown). */
  async close(): Promise<void> {
    this.stopHealthChecks();
    await Promise.all([...this.live.keys()].map((id) => this.detach(id)));
  }

  private async setEnabled(pluginId: string, enabled: boolean): Promise<HttpPluginView> {
    return this.locks.run(pluginId, async () => {
      const now = new Date().toISOString();
      // Only enabled (and updatedAt) change, on the record as stored now.
      const stored = await this.deps.store.update(pluginId, (current) =>
        current.transport === 'http' ? { ...current, enabled, updatedAt: now } : undefined,
      );
      const updated = this.asHttpRecord(pluginId, stored);
      if (enabled && !this.live.has(pluginId)) this.attach(updated);
      if (!enabled) await this.detach(pluginId);
      return this.view(updated);
    });
  }

  private attach(record: HttpPluginRecord): void {
    const endpoint = new HttpPluginEndpoint(record, this.deps);
    this.live.set(record.pluginId, endpoint);
    this.deps.endpoints?.set(record.pluginId, endpoint);
  }

  private async detach(pluginId: string): Promise<void> {
    const endpoint = this.live.get(pluginId);
    if (!endpoint) return;
    this.live.delete(pluginId);
    this.deps.endpoints?.delete(pluginId);
    await endpoint.close();
  }

  private async httpRecord(pluginId: string): Promise<HttpPluginRecord> {
    return this.asHttpRecord(pluginId, await this.deps.store.get(pluginId));
  }

  private asHttpRecord(pluginId: string, record: PluginRecord | undefined): HttpPluginRecord {
    if (!record) throw new HostError('PLUGIN_NOT_FOUND', `No plugin with pluginId ${pluginId}. List plugins with GET /api/plugins.`);
    if (record.transport !== 'http') {
      throw new HostError(
        'PLUGIN_STATE_CONFLICT',
        `${pluginId} is a stdio plugin; this action applies to HTTP plugins. Update stdio plugins by uploading a new package.`,
      );
    }
    return record;
  }

  private view(record: HttpPluginRecord): HttpPluginView {
    const m = record.manifest;
    return {
      pluginId: record.pluginId,
      transport: 'http',
      baseUrl: record.baseUrl,
      name: m.name,
      version: m.version,
      author: m.author,
      ...(m.description === undefined ? {} : { description: m.description }),
      capabilities: m.capabilities,
      capabilityNames: capabilityNames(m.capabilities),
      enabled: record.enabled,
      state: record.enabled ? 'running' : 'stopped',
      installedAt: record.installedAt,
      updatedAt: record.updatedAt,
      ...(record.requestTimeoutMilliseconds === undefined ? {} : { requestTimeoutMilliseconds: record.requestTimeoutMilliseconds }),
      manifest: m,
      health: this.live.get(record.pluginId)?.health() ?? null,
    };
  }

  private networkOptions() {
    const { policy, resolver, connectTimeoutMilliseconds, tls, manifestTimeoutMilliseconds } = this.deps;
    return { policy, resolver, connectTimeoutMilliseconds, tls, timeoutMilliseconds: manifestTimeoutMilliseconds };
  }
}
