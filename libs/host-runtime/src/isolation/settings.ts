import type { NetworkAccess } from '@host/protocol';

/**
 * How plugins are kept apart from the host and from each other
 * (docs/operator/security.md, "Isolation modes"):
 * - `same-user`: as the host's own user, in its own process group;
 * - `own-user`: as a user of its own from the uid range, with rlimits or a cgroup;
 * - `sandbox`: its own user inside a bubblewrap sandbox that sees only its own folders and runtime.
 */
export type IsolationMode = 'same-user' | 'own-user' | 'sandbox';

/** What the operator asks for: the strongest mode the machine offers, or one mode (a start fails when it is not available). */
export type IsolationRequest = 'auto' | IsolationMode;

/** Per-plugin resource limits; 0 leaves one unlimited. */
export interface PluginResourceLimits {
  memoryBytes: number;
  processes: number;
  openFiles: number;
  cpuSeconds: number;
}

export const DEFAULT_PLUGIN_LIMITS: PluginResourceLimits = {
  memoryBytes: 512 * 1024 * 1024,
  processes: 128,
  openFiles: 1024,
  cpuSeconds: 0,
};

export interface UidRange {
  first: number;
  last: number;
}

export const DEFAULT_UID_RANGE: UidRange = { first: 200000, last: 265535 };

export interface IsolationSettings {
  request: IsolationRequest;
  uidRange: UidRange;
  limits: PluginResourceLimits;
  /** The most network the operator approves; a plugin gets the lesser of this and what its manifest declares. */
  network: NetworkAccess;
}

export const DEFAULT_ISOLATION: IsolationSettings = {
  request: 'auto',
  uidRange: DEFAULT_UID_RANGE,
  limits: DEFAULT_PLUGIN_LIMITS,
  network: 'any',
};

const NETWORK_ORDER: readonly NetworkAccess[] = ['none', 'loopback', 'any'];

/** The lesser of two network grants. */
export function narrowerNetwork(a: NetworkAccess, b: NetworkAccess): NetworkAccess {
  return NETWORK_ORDER[Math.min(NETWORK_ORDER.indexOf(a), NETWORK_ORDER.indexOf(b))]!;
}

/** How limits are enforced for one run. */
export type LimitMechanism = 'cgroup-v2' | 'cgroup-v1' | 'rlimit' | 'none';

/** What one plugin run got, for the log and the runtime status. */
export interface IsolationStatus {
  mode: IsolationMode;
  /** The plugin's uid (own-user and sandbox). */
  uid?: number;
  /** The network it can reach: what is enforced, not only what was asked. */
  network: NetworkAccess;
  limits: LimitMechanism;
  /** One line for the log and the admin app. */
  summary: string;
}

/** Which limit ended a run, when one did. */
export type LimitHit = 'memory' | 'cpu';

/** Parses "200000-265535". */
export function parseUidRange(text: string): UidRange | undefined {
  const m = /^(\d+)-(\d+)$/.exec(text.trim());
  if (!m) return undefined;
  const first = Number(m[1]);
  const last = Number(m[2]);
  if (!Number.isSafeInteger(first) || !Number.isSafeInteger(last) || first < 1000 || last < first || last > 4294967294) return undefined;
  return { first, last };
}

export function formatLimits(l: PluginResourceLimits): string {
  const parts = [
    l.memoryBytes > 0 ? `memory ${Math.round(l.memoryBytes / 1024 / 1024)} MiB` : 'memory unlimited',
    l.processes > 0 ? `${l.processes} processes` : 'processes unlimited',
    l.openFiles > 0 ? `${l.openFiles} open files` : 'open files unlimited',
    l.cpuSeconds > 0 ? `${l.cpuSeconds} s CPU` : 'CPU time unlimited',
  ];
  return parts.join(', ');
}
