import { hostPaths } from '@host/host-core';
import { acquireDataDirLock } from '@host/host-store';
import type { AddressInfo } from 'node:net';
import { existsSync, readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import type { QqBotAccountInput } from '@host/admin-api';
import { readAccountsFile } from '@host/host-qqbot';
import { composeHost } from './compose';
import { addressPolicyOf, isolationOf, metricsListenOf, parseConfig, readAdminTokenFile, USAGE } from './config';
import { createHostLog, type HostLog } from './host-log';
import { HostMetrics } from '@host/host-metrics';
import { createMetricsServer } from './observability';
import { protectHostSecrets } from './host-secrets';
import { describeSupport, probeIsolation, strongestMode } from '@host/host-runtime';
import { createHostServer } from './http-server';
import packageJson from '../package.json';

/** The host's own log lines: text until the configuration is read, then in the format it asks for (HOST_LOG_FORMAT). */
let log: HostLog = createHostLog('text');

/** The longest a stop (SIGTERM, SIGINT) waits for plugins and the stores before the host exits anyway. */
const SHUTDOWN_DEADLINE_MILLISECONDS = 30_000;

/** A stop signal repeated within this time of the first is a copy of it (see shutdown), not a second request. */
const REPEAT_SIGNAL_GRACE_MILLISECONDS = 2_000;

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
  log = createHostLog(config.logFormat);
  let adminToken: string | undefined;
  if (config.adminTokenFile !== undefined) {
    const read = readAdminTokenFile(resolve(config.adminTokenFile));
    if (!read.ok) {
      console.error(`configuration error: ${read.error}`);
      console.error('The host did not start. Fix the settings above (see --help).');
      process.exit(2);
    }
    if (read.warning) log('warn', read.warning);
    adminToken = read.token;
  }
  let qqbotAccounts: QqBotAccountInput[] = [];
  if (config.qqbotAccountsFile !== undefined) {
    const file = resolve(config.qqbotAccountsFile);
    const read = readAccountsFile(file, (p) => resolve(dirname(file), p));
    if (!read.ok) {
      for (const e of read.errors) console.error(`configuration error: ${e}`);
      console.error('The host did not start. Fix the settings above (see docs/operator/qqbot.md).');
      process.exit(2);
    }
    qqbotAccounts = read.accounts;
  }
  let databasePassword: string | undefined;
  if (config.databasePasswordFile !== undefined) {
    try {
      databasePassword = readFileSync(resolve(config.databasePasswordFile), 'utf8').replace(/\r?\n$/, '');
    } catch (e) {
      console.error(
        `configuration error: database password file ${config.databasePasswordFile} cannot be read (${(e as NodeJS.ErrnoException).code ?? String(e)})`,
      );
      console.error('The host did not start. Fix the settings above (see --help).');
      process.exit(2);
    }
  }
  // Whatever the host writes from here on is its own: plugins running as other users read only what is given to them.
  process.umask(0o077);
  const paths = hostPaths(resolve(config.dataDir));
  const isolationSettings = isolationOf(config);
  const isolationSupport = probeIsolation(isolationSettings);
  const chosenMode = isolationSettings.request === 'auto' ? strongestMode(isolationSupport) : isolationSettings.request;
  for (const line of describeSupport(isolationSupport, chosenMode)) log(chosenMode === 'sandbox' ? 'info' : 'warn', line);
  const releaseLock = await acquireDataDirLock(paths.stateDir, {
    onWait: (pid, wait) => log('info', `the data directory is locked by host process ${pid}; waiting up to ${wait / 1000} s for it to end`),
  });
  protectHostSecrets(
    paths.stateDir,
    [config.keyFile, config.adminTokenFile].flatMap((f) => (f === undefined ? [] : [resolve(f)])),
    log,
  );
  const metricsListen = metricsListenOf(config);
  const host = await composeHost({
    paths,
    store: config.store,
    storeOptions: {
      databaseUrl: config.databaseUrl,
      databasePassword,
      hostKeyFile: config.keyFile === undefined ? undefined : resolve(config.keyFile),
      replica: config.replicaName ?? hostname(),
    },
    adminToken,
    resetAdminToken: config.resetAdminToken,
    maxUploadBytes: config.maxUploadBytes,
    maxWaitingEvents: config.maxWaitingEvents,
    // The admin app's build (dist/apps/admin) beside the host's (dist/apps/host/main.cjs).
    adminAppDir: resolve(__dirname, '../admin'),
    http: { policy: addressPolicyOf(config) },
    qqbot: { accounts: qqbotAccounts, ...(config.publicUrl ? { publicUrl: config.publicUrl } : {}) },
    version: packageJson.version,
    isolation: { support: isolationSupport, settings: isolationSettings },
    log,
    ...(metricsListen.kind === 'off' ? {} : { metrics: new HostMetrics(), metricsOnMainListener: metricsListen.kind === 'admin' }),
  });
  const report = host.recovery;
  if (report.journal !== 'none')
    log('warn', `an interrupted install of ${report.pluginId} was ${report.journal === 'completed' ? 'completed' : 'rolled back'}`);
  for (const id of report.adopted) log('info', `registered package found on disk: ${id}`);
  for (const i of report.invalid) log('warn', `invalid package plugins-v2/${i.pluginId}: ${i.issues.map((x) => x.message).join('; ')}`);

  const policy = addressPolicyOf(config);
  const allowed = (yes: boolean) => (yes ? 'allowed' : 'refused');
  log(
    'info',
    `HTTP plugins on loopback addresses: ${allowed(policy.allowLoopback)} (HOST_HTTP_ALLOW_LOOPBACK), on private addresses: ${allowed(policy.allowPrivate)} (HOST_HTTP_ALLOW_PRIVATE)`,
  );
  // Events that arrive before the plugins have started wait for them rather than find nobody.
  await host.expectEnabledPlugins();
  const server = createHostServer(host.app).listen(config.port, config.bind);
  await new Promise<void>((ok, fail) => {
    server.once('listening', ok);
    server.once('error', (e: NodeJS.ErrnoException) => fail(listenError(e, config.bind, config.port)));
  });
  const { port } = server.address() as AddressInfo;
  const shownHost = config.bind.includes(':') ? `[${config.bind}]` : config.bind === '0.0.0.0' ? '127.0.0.1' : config.bind;
  const url = `http://${shownHost}:${port}/`;
  if (host.generatedToken && config.logFormat === 'json') {
    log('info', `admin token (shown once, only its hash is stored): ${host.generatedToken}; open ${url} and sign in with it`);
  } else if (host.generatedToken) {
    // Shown once: only its hash is stored.
    console.log(
      `\n  Admin app:   ${url}   <- open this in a browser and sign in with the token below\n  Admin token: ${host.generatedToken}\n\n  Keep the token now: it is not shown again. Scripts send it as "Authorization: Bearer <token>" to ${url}api.\n  Lost it? Restart with --reset-admin-token (with npm: npm start -- --reset-admin-token, the -- passes it on;\n  or HOST_RESET_ADMIN_TOKEN=true npm start), or put a token in a file and set HOST_ADMIN_TOKEN_FILE.\n`,
    );
  }
  if (!existsSync(join(resolve(__dirname, '../admin'), 'index.html')))
    log('warn', 'the admin app is not built, so / shows how to build it: run "npx nx run admin:build" (npm start does it)');
  log('info', `admin app: ${url} (sign in with the admin token)`);
  if (host.metrics && metricsListen.kind === 'bind') {
    // Unauthenticated by design: for a private interface only the scraper reaches (docs/operator/metrics.md).
    const metricsServer = createMetricsServer(host.metrics).listen(metricsListen.port, metricsListen.host);
    await new Promise<void>((ok, fail) => {
      metricsServer.once('listening', ok);
      metricsServer.once('error', (e: NodeJS.ErrnoException) =>
        fail(
          new Error(
            `the metrics listener cannot listen on ${config.metricsBind} (${e.code ?? e.message}); set HOST_METRICS_BIND or --metrics-bind to a free address and port of this machine`,
          ),
        ),
      );
    });
    metricsServer.unref();
    const { port: metricsPort } = metricsServer.address() as AddressInfo;
    const shown = metricsListen.host.includes(':') ? `[${metricsListen.host}]` : metricsListen.host;
    log('info', `metrics: http://${shown}:${metricsPort}/metrics (no token: keep this address private)`);
  } else if (host.metrics) log('info', `metrics: ${url}metrics (with the admin token)`);
  // Last: the "listening" line tells scripts the host is ready.
  log('info', `admin API: ${url}api (OpenAPI document: ${url}api/openapi.json)`);
  log('info', `host ${packageJson.version} listening on ${url} (data directory ${paths.dataDir})`);

  let stoppingSince: number | undefined;
  const shutdown = async (signal: string) => {
    if (stoppingSince !== undefined) {
      // Ctrl-C reaches the host from the terminal and again through npm and the launcher of `npm start` within
      // milliseconds: those copies are the same request. Only a later one asks to exit without waiting.
      if (Date.now() - stoppingSince < REPEAT_SIGNAL_GRACE_MILLISECONDS) return;
      log('warn', `${signal} again: exiting without waiting`);
      process.exit(1);
    }
    stoppingSince = Date.now();
    log('info', `${signal}: stopping plugins and the server (Ctrl-C again to exit without waiting)`);
    // Plugins get their stop grace; a database that does not answer (each statement waits for its connect timeout) gets no more than this.
    setTimeout(() => {
      log(
        'error',
        `${signal}: stopping took longer than ${SHUTDOWN_DEADLINE_MILLISECONDS / 1000} s (is the database away?); exiting without waiting`,
      );
      process.exit(1);
    }, SHUTDOWN_DEADLINE_MILLISECONDS).unref();
    server.close();
    server.closeIdleConnections?.();
    try {
      await host.close();
      await releaseLock();
    } finally {
      process.exit(0);
    }
  };
  process.on('SIGINT', () => void shutdown('SIGINT'));
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  // A closed terminal sends SIGHUP, whose default would end the host without stopping its plugins.
  process.on('SIGHUP', () => void shutdown('SIGHUP'));
  // After the handlers: a stop asked for as soon as the host listens still stops the plugins it starts.
  await host.startEnabledPlugins();
}

/** Why the server could not listen, with the setting that fixes it. */
function listenError(e: NodeJS.ErrnoException, bind: string, port: number): Error {
  const where = `${bind.includes(':') ? `[${bind}]` : bind}:${port}`;
  if (e.code === 'EADDRINUSE')
    return new Error(
      `${where} is already in use (EADDRINUSE): another program, or another host, listens there. Stop it, or choose another port with HOST_PORT or --port.`,
    );
  if (e.code === 'EACCES')
    return new Error(
      `${where} needs privileges this user lacks (EACCES). Use a port above 1023 (HOST_PORT or --port) and put a reverse proxy in front for 80 or 443.`,
    );
  if (e.code === 'EADDRNOTAVAIL')
    return new Error(
      `${bind} is not an address of this machine (EADDRNOTAVAIL). Set HOST_BIND or --bind to one of its addresses, or 0.0.0.0 for all.`,
    );
  return e;
}

main().catch((e: Error) => {
  console.error(`The host could not start: ${e.message}`);
  process.exit(1);
});
