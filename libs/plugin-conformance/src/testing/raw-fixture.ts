import { copyFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** The SDK-less fixture plugin (test-fixtures/raw-plugin.mjs): conforming, or broken in one named way. */
export const RAW_PLUGIN_SCRIPT = join(__dirname, '..', '..', 'test-fixtures', 'raw-plugin.mjs');

/** Every deliberate fault of the fixture, and the check that must name it. */
export const RAW_FAULTS = {
  'help-on-stdout': 'cli.without-host-stdio',
  'stdout-pollution': 'stdout.frames-only',
  'no-not-initialized': 'handshake.not-initialized',
  'accepts-other-id': 'handshake.plugin-id-mismatch',
  reinitialize: 'handshake.already-initialized',
  'no-method-not-found': 'rpc.method-not-found',
  'ack-after-handler': 'events.decision-first',
  'no-completion': 'events.completion',
  'no-token': 'events.reply-token',
  'ping-blocked': 'ping.while-busy',
  'no-overloaded': 'events.overloaded',
  'markdown-c2c-generic': 'messages.markdown-c2c',
  'deliver-unhandled': 'events.deliver-ack',
  'deliver-no-completion': 'events.deliver-completion',
  'deliver-file-reply': 'events.deliver-replies',
  'tolerant-framing': 'framing.malformed-exit',
  'ignores-stop': 'stop.graceful',
  'no-eof-exit': 'stdin.eof-exit',
  'orphan-child': 'process-group.empty',
  'escaped-child': 'process-group.empty',
} as const;
export type RawFault = keyof typeof RAW_FAULTS;

/** The event types other than message.created the fixture subscribes to, unless told not to. */
const CHAT_EVENT_SUBSCRIPTIONS = ['interaction.created', 'bot.added', 'bot.removed', 'conversation.opened'].map((eventType) => ({
  eventType,
}));

/**
 * Writes an unpacked package of the fixture into `dir` (manifest.json and plugin.mjs); returns `dir`. Without commands it
 * declines every message; without chat events it subscribes to message.created alone.
 */
export function writeRawFixture(
  dir: string,
  fault: RawFault | '' = '',
  pluginId = 'org.conformance.raw',
  options: { commands?: boolean; chatEvents?: boolean } = {},
): string {
  mkdirSync(dir, { recursive: true });
  copyFileSync(RAW_PLUGIN_SCRIPT, join(dir, 'plugin.mjs'));
  const manifest = {
    pluginId,
    name: 'Raw conformance fixture',
    version: '1.0.0',
    author: 'Conformance tests',
    protocolVersion: 2,
    sdkVersion: '1.0.0',
    transport: {
      type: 'stdio-jsonrpc',
      stdio: { command: 'node', args: ['plugin.mjs', '--host-stdio'], workingDirectory: '.', environment: fault ? { FAULT: fault } : {} },
    },
    eventSubscriptions: [{ eventType: 'message.created' }, ...(options.chatEvents === false ? [] : CHAT_EVENT_SUBSCRIPTIONS)],
    permissions: ['messages.reply'],
    commands: options.commands === false ? [] : [{ name: 'raw' }],
    concurrency: { maxConcurrentEvents: 2, handlerDeadlineMilliseconds: 2000 },
  };
  writeFileSync(join(dir, 'manifest.json'), JSON.stringify(manifest, null, 2));
  return dir;
}
