// Shared by the runtime's tests and the host processes they start: a stdio
// plugin record whose package is one fixture script, and message events.
import { copyFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { hostPaths, type StdioPluginRecord } from '@host/host-core';
import { parseStdioManifest, type MessageEvent } from '@host/protocol';

export interface FixturePlugin {
  /** The data directory of the host. */
  dataDir: string;
  pluginId: string;
  /** The fixture script (copied into the package as plugin.mjs). */
  script: string;
  /** Arguments after `--host-stdio` (the fixture's mode). */
  args?: string[];
  /** Leave `--host-stdio` out of the manifest's arguments. */
  withoutHostStdio?: boolean;
  permissions?: string[];
  handlerDeadlineMilliseconds?: number;
}

/** Installs `script` as the package of `pluginId` and returns its registry record. */
export function installFixturePlugin(o: FixturePlugin): StdioPluginRecord {
  const paths = hostPaths(o.dataDir);
  mkdirSync(paths.packageDir(o.pluginId), { recursive: true });
  copyFileSync(o.script, join(paths.packageDir(o.pluginId), 'plugin.mjs'));
  const parsed = parseStdioManifest({
    pluginId: o.pluginId,
    name: o.pluginId,
    version: '1.0.0',
    author: 'Tests',
    protocolVersion: 2,
    sdkVersion: '2.0.0',
    transport: {
      type: 'stdio-jsonrpc',
      stdio: { command: process.execPath, args: ['plugin.mjs', ...(o.withoutHostStdio ? [] : ['--host-stdio']), ...(o.args ?? [])] },
    },
    eventSubscriptions: [{ eventType: 'message.created' }],
    permissions: o.permissions ?? [],
    ...(o.handlerDeadlineMilliseconds ? { concurrency: { handlerDeadlineMilliseconds: o.handlerDeadlineMilliseconds } } : {}),
  });
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.issues));
  const at = new Date().toISOString();
  return {
    pluginId: o.pluginId,
    transport: 'stdio-jsonrpc',
    manifest: parsed.value,
    packageSha256: '0'.repeat(64),
    installedAt: at,
    updatedAt: at,
    enabled: true,
  };
}

/** Message event number `n` in a group conversation. */
export function fixtureEvent(n: number): MessageEvent {
  return {
    eventId: `ev-${n}`,
    eventType: 'message.created',
    timestamp: new Date().toISOString(),
    source: 'console',
    bot: { botAccountId: 'bot', platform: 'console' },
    conversation: { type: 'group', conversationId: 'g' },
    sender: { provider: 'console', mentionId: 'u' },
    message: { id: `m-${n}`, content: 'hello', attachments: [], mentions: [] },
    messageReference: { messageId: `m-${n}`, targetType: 'group', targetId: 'g', restrictions: [] },
  };
}
