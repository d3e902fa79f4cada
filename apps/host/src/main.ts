import { hostPaths, type PluginRuntime, type RegistryStore } from '@host/host-core';
import { createApp, ensureAdminToken } from '@host/host-api';
import { createUnavailableRuntime, PluginInstaller } from '@host/host-installer';
import { acquireDataDirLock, JsonRegistryStore } from '@host/host-store';
import type { AddressInfo } from 'node:net';
import { resolve } from 'node:path';
import { parseConfig, USAGE } from './config';
import packageJson from '../package.json';

const log = (level: 'info' | 'warn' | 'error', message: string) => {
  const line = `${new Date().toISOString()} ${level.padEnd(5)} ${message}`;
  if (level === 'info') console.log(line);
  else console.error(line);
};

/** Starts the plugins the operator left running (enabled) when the host last stopped. */
async function startEnabledPlugins(store: RegistryStore, runtime: PluginRuntime): Promise<void> {
  for (const r of await store.list()) {
    if (r.transport !== 'stdio-jsonrpc' || !r.enabled) continue;
    await runtime.start(r.pluginId).catch((e: Error) => log('warn', `could not start ${r.pluginId}: ${e.message}`));
  }
}

/** Composition root: configuration, wiring, listen, graceful shutdown. */
async function main(): Promise<void> {
  const parsed = parseConfig(process.argv.slice(2), process.env);
  if (parsed.ok === 'help') {
    process.stdout.write(USAGE);
    return;
  }
  if (!parsed.ok) {
    for (const e of parsed.errors) console.error(`configuration error: ${e}`);
    console.error('The host did not start. Fix the settings above (see --help).');
    process.exit(2);
  }
  const config = parsed.config;
  const paths = hostPaths(resolve(config.dataDir));
  const releaseLock = await acquireDataDirLock(paths.stateDir);
  const store = await JsonRegistryStore.open(paths.stateDir);
  const runtime = createUnavailableRuntime();
  const installer = new PluginInstaller({ paths, store, runtime, log });
  const report = await installer.init();
  if (report.journal !== 'none') log('warn', `an interrupted install of ${report.pluginId} was ${report.journal === 'completed' ? 'completed' : 'rolled back'}`);
  for (const id of report.adopted) log('info', `registered package found on disk: ${id}`);
  for (const i of report.invalid) log('warn', `invalid package plugins-v2/${i.pluginId}: ${i.issues.map((x) => x.message).join('; ')}`);
  const token = await ensureAdminToken(store, { token: config.adminToken, reset: config.resetAdminToken });

  const app = createApp({
    paths,
    store,
    installer,
    runtime,
    adminTokenHash: token.hash,
    maxUploadBytes: config.maxUploadBytes,
    version: packageJson.version,
    log: (m) => log('error', m),
  });
  const server = app.listen(config.port, config.bind);
  await new Promise<void>((ok, fail) => {
    server.once('listening', ok);
    server.once('error', fail);
  });
  const { port } = server.address() as AddressInfo;
  const shownHost = config.bind.includes(':') ? `[${config.bind}]` : config.bind === '0.0.0.0' ? '127.0.0.1' : config.bind;
  const url = `http://${shownHost}:${port}/`;
  if (token.generated) {
    // Shown once: only its hash is stored.
    console.log(
      `\n  Admin URL:   ${url}\n  Admin token: ${token.generated}\n\n  Keep the token now: it is not shown again. Send it as "Authorization: Bearer <token>".\n  Lost it? Restart with --reset-admin-token, or set HOST_ADMIN_TOKEN.\n`,
    );
  }
  // Last: the "listening" line tells scripts the host is ready.
  log('info', `admin API: ${url}api (OpenAPI document: ${url}api/openapi.json)`);
  log('info', `host ${packageJson.version} listening on ${url} (data directory ${paths.dataDir})`);
  await startEnabledPlugins(store, runtime);

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) {
      log('warn', `${signal} again: exiting without waiting`);
      process.exit(1);
    }
    stopping = true;
    log('info', `${signal}: stopping plugins and the server`);
    server.close();
    server.closeIdleConnections?.();
    try {
      await runtime.stopAll('hostShutdown');
      await store.close();
      await releaseLock();
    } finally {
      process.exit(0);
    }
  };
  process.on('SIGINT', () => void shutdown('SIGINT'));
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
}

main().catch((e: Error) => {
  console.error(`The host could not start: ${e.message}`);
  process.exit(1);
});
