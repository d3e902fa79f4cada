/** A valid stdio manifest of an echo plugin, shared by the SDK's tests. */
export const echoManifest = {
  pluginId: 'com.example.echo',
  name: 'Echo',
  version: '1.2.3',
  author: 'Example',
  protocolVersion: 2,
  sdkVersion: '2.0.0',
  transport: { type: 'stdio-jsonrpc', stdio: { command: 'node', args: ['dist/index.js', '--host-stdio'] } },
  eventSubscriptions: [{ eventType: 'message.created' }],
  permissions: ['messages.reply'],
  commands: [{ name: 'echo', aliases: ['e'], prefixes: ['/', '!'], priority: 10 }],
};
