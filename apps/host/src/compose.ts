import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Express } from 'express';
import {
  KeyedLock,
  type HostPaths,
  type InvalidPackage,
  type PluginLock,
  type PluginRecord,
  type PluginRuntime,
  type StdioPluginRecord,
  type RegistryStore,
} from '@host/host-core';
import {
  adminAppRouter,
  AuthThrottle,
  createApp,
  statsRoutes,
  eventLogRoutes,
  ensureAdminToken,
  FollowableLogStore,
  reapDoctorProcesses,
  settingsForInitialize,
  type AuthCounters,
  type DoctorIsolation,
  type SessionOptions,
} from '@host/host-api';
import { ConsoleProvider, consoleMediaRoutes, consoleRoutes } from '@host/host-console';
import { Dispatcher, EventLog, RefusalLog } from '@host/host-dispatch';
import { QqBotAccounts, QqBotProvider, QqBotWebhook, qqbotRoutes } from '@host/host-qqbot';
import type { QqBotAccountInput } from '@host/admin-api';
import type { MessageEvent } from '@host/protocol';
import { DEFAULT_ADDRESS_POLICY, HttpPluginRegistry, httpRegistrationRoutes, MediaGuard, type HttpEndpointOptions } from '@host/host-http';
import { PluginInstaller, type InstallerOptions, type RecoveryReport } from '@host/host-installer';
import {
  FilePluginLogStore,
  PLUGIN_UIDS_FILE,
  PluginUids,
  portableSupport,
  StdioPluginRuntime,
  strongestMode,
  type RuntimeTimings,
  type StdioRuntimeOptions,
} from '@host/host-runtime';
import { FileMediaStore, HOST_KEY_FILE_NAME, loadHostKey, MEDIA_DIR_NAME } from '@host/host-store';
import type { HostMetrics } from '@host/host-metrics';
import { componentLog, type HostLog } from './host-log';
import { metricsRouter, observeHost, providerOf } from './observability';
import { DEFAULT_STORE, openStores, type StoreOptions } from './stores';
import { Cluster } from '@host/host-cluster';

/** The conformance worker the build writes beside the host's main (apps/host/tsup.config.ts); absent when run from sources. */
const DOCTOR_WORKER = join(__dirname, 'doctor-worker.cjs');

export interface HostOptions {
  paths: HostPaths;
  /** Which stores keep the registry, settings, pending updates and the event log (HOST_STORE); default `sql` (embedded in the data directory unless storeOptions names a server). */
  store?: string;
  /** The SQL store's database server, password, host key and replica name (HOST_DATABASE_URL, ...). */
  storeOptions?: Omit<StoreOptions, 'onError'>;
  adminToken?: string;
  resetAdminToken?: boolean;
  maxUploadBytes?: number;
  /** Deliveries that may wait for plugins host-wide before new events are refused at admission (HOST_MAX_WAITING_EVENTS). */
  maxWaitingEvents?: number;
  /** The built admin app (index.html and assets/), served at /; default none. */
  adminAppDir?: string;
  /** Bounds of admin app sessions. */
  sessions?: SessionOptions;
  version: string;
  log: HostLog;
  /** Prometheus metrics (docs/operator/metrics.md); without it none are kept. */
  metrics?: HostMetrics;
  /** Serve GET /metrics on the main listener, behind the admin token (default; false when it has a listener of its own). */
  metricsOnMainListener?: boolean;
  /** Test seam: shorter restart delays and deadlines. */
  runtimeTimings?: Partial<RuntimeTimings>;
  /** How stdio plugins are isolated (probed at start, HOST_PLUGIN_ISOLATION); without it they run as the host's user. */
  isolation?: StdioRuntimeOptions['isolation'];
  /** Test seam: shorter lease renewal and expiry (several hosts on one PostgreSQL server). */
  leaseTimings?: { renewMilliseconds?: number; ttlMilliseconds?: number };
  /** Address policy and delivery options of HTTP plugins. */
  http?: Pick<HttpEndpointOptions, 'policy'>;
  /** Interval of HTTP plugin health checks; 0 turns them off. */
  httpHealthCheckMilliseconds?: number;
  /** Test seam: the per-plugin lock every component shares (default: a new KeyedLock). */
  locks?: PluginLock;
  /** Test seam: called after each step of a package swap. */
  onInstallStep?: InstallerOptions['onStep'];
  /** QQ Bot accounts of the accounts file (HOST_QQBOT_ACCOUNTS_FILE), and where the platform reaches the host (HOST_PUBLIC_URL). */
  qqbot?: { accounts?: QqBotAccountInput[]; publicUrl?: string };
}

/**
 * Offers an event to the dispatcher: refused at admission, or taken (`durable` once it is in the inbox, which a
 * provider's webhook waits for before it answers) and routed (which it does not wait for).
 */
function acceptEvent(
  dispatcher: Dispatcher,
  event: MessageEvent,
): { accepted: true; durable: Promise<void>; routed: Promise<unknown> } | { accepted: false; reason: string } {
  const taking = dispatcher.take(event);
  return taking.accepted ? taking : { accepted: false, reason: taking.refusal.message };
}

/** Everything a running host holds, so main (and tests) can start and stop it. */
export interface Host {
  app: Express;
  store: RegistryStore;
  runtime: StdioPluginRuntime;
  httpPlugins: HttpPluginRegistry;
  dispatcher: Dispatcher;
  qqbotAccounts: QqBotAccounts;
  /** The metrics of HostOptions.metrics, for a listener of their own. */
  metrics?: HostMetrics;
  /** Wrong admin tokens and throttled attempts since the start (live; read it, do not change it). */
  authCounters: Readonly<AuthCounters>;
  recovery: RecoveryReport;
  /** Leases and the durable queue of stdio plugins, when several hosts share a PostgreSQL server. */
  cluster?: Cluster;
  /** The admin token when this start generated it (print it once). */
  generatedToken?: string;
  /**
   * Events routed to the stdio plugins the operator left enabled wait for them from now on, until
   * startEnabledPlugins starts them (call before the host takes events, so none finds them not started yet).
   */
  expectEnabledPlugins(): Promise<void>;
  /** Starts the stdio plugins the operator left enabled (except those the boot guard holds back). */
  startEnabledPlugins(): Promise<void>;
  /** Stops every plugin and closes the stores. */
  close(): Promise<void>;
}

/**
 * Wires the host: stores (chosen by HOST_STORE), plugin log, console provider, dispatcher,
 * stdio runtime, HTTP plugins, installer and the admin API. The only place
 * where the pieces meet.
 */
export async function composeHost(o: HostOptions): Promise<Host> {
  const { paths } = o;
  const stores = await openStores(o.store ?? DEFAULT_STORE, paths, {
    ...o.storeOptions,
    onError: (e) => o.log('warn', `could not write the event log: ${e.message}`),
  });
  o.log('info', `store: ${stores.description}`);
  if (stores.kind === 'file')
    o.log(
      'warn',
      'HOST_STORE=file keeps accepted events in memory only: a crash loses those not yet handled. Start without HOST_STORE=file to move this data directory to the embedded SQL store (its files are imported on that start; see docs/operator/storage.md).',
    );
  if (stores.imported) {
    const i = stores.imported;
    o.log(
      'info',
      `imported the data directory's files into the store: ${i.plugins} plugins, ${i.settings} settings, ${i.pendingUpdates} pending updates, ${i.events} events (the files are left as they were)`,
    );
  }
  // Store calls are timed into host_store_operation_duration_seconds when metrics are on.
  const store = o.metrics ? o.metrics.timeStore(stores.registry, 'registry') : stores.registry;
  const settings = o.metrics ? o.metrics.timeStore(stores.settings, 'settings') : stores.settings;
  // One lock per plugin id for the whole host: the installer, the HTTP
  // registry and the admin API each check a plugin's record and then act on it.
  const locks = o.locks ?? new KeyedLock();
  // One log store for every writer; the admin app follows its new lines (GET /api/plugins/{id}/logs/stream).
  const logs = new FollowableLogStore(new FilePluginLogStore(paths));
  const provider = new ConsoleProvider();
  const httpPlugins = new HttpPluginRegistry({ store, locks, logs, ...o.http });
  // Several hosts on one PostgreSQL server: each stdio plugin runs on the replica holding its lease, and events
  // reach it through the durable queue wherever they were taken (docs/operator/cluster.md).
  const cluster: Cluster | undefined = stores.cluster
    ? new Cluster({
        ...stores.cluster,
        shared: stores.shared,
        store,
        dispatcher: () => dispatcher,
        invalid: (): string[] => installer.invalidPackages().map((i: InvalidPackage) => i.pluginId),
        log: componentLog(o.log, 'cluster'),
        timings: o.leaseTimings,
      })
    : undefined;
  // Events refused at admission: one log line per cause and 10 s, with the count of the others.
  const refusalLog = new RefusalLog((message) => o.log('warn', message, { component: 'dispatch' }));
  // The bytes stdio plugins upload (media.upload), under the data directory; emptied at each start, as ids die with the host.
  const uploads = await FileMediaStore.open({ dir: join(paths.dataDir, MEDIA_DIR_NAME) });
  const media = new MediaGuard({ policy: o.http?.policy ?? DEFAULT_ADDRESS_POLICY, media: uploads });
  // The dispatcher asks for endpoints per event, after the runtime exists.
  const dispatcher: Dispatcher = new Dispatcher({
    endpoints: cluster
      ? () => [...cluster.endpoints(), ...httpPlugins.liveEndpoints()]
      : () => [...runtime.endpoints(), ...httpPlugins.liveEndpoints()],
    events: new EventLog({ store: stores.events }),
    ...(o.maxWaitingEvents !== undefined ? { maxWaitingEvents: o.maxWaitingEvents } : {}),
    onRefused: (event, refusal) => refusalLog.note(event, refusal),
    ...(stores.inbox ? { inbox: stores.inbox } : {}),
    // Image and file URLs are checked against the HTTP plugins' address policy, and counted per plugin, before
    // anything is sent (docs/protocol/v2.md 7.1); a refusal is recorded with the event the reply answers.
    outbound: (sink) =>
      media.wrap(cluster ? cluster.outbound(sink) : sink, (request, error) =>
        sink.noteRefusal(request, { code: error.code, message: error.message }),
      ),
    ...(cluster || o.metrics
      ? {
          observeOutbound: (r, out) => {
            o.metrics?.outbound(providerOf(dispatcher, out), out);
            cluster?.observe(r, out);
          },
        }
      : {}),
  });
  const stats = observeHost({ dispatcher, httpPlugins, metrics: o.metrics, log: o.log });
  dispatcher.providers.register(provider);
  // QQ Bot accounts: from the accounts file and those added through the admin API (kept in the state directory).
  // QQ events come in through each account's webhook; messages.send goes to the bot its target names (the console
  // bot "console-bot" is one of them), see docs/protocol/v2.md 4.7.
  // Their AppSecrets are sealed with the host key (the one the SQL store seals with; made for the file store too).
  const qqbotAccounts = new QqBotAccounts({
    storeFile: join(paths.stateDir, 'qqbot-accounts.json'),
    secrets: await loadHostKey(o.storeOptions?.hostKeyFile ?? join(paths.stateDir, HOST_KEY_FILE_NAME), { create: true }),
    reservedIds: [provider.botAccountId],
    replay: { store: stores.replays },
  });
  dispatcher.providers.register(new QqBotProvider(qqbotAccounts, { uploads }));
  const qqbotWebhook = new QqBotWebhook({
    accounts: qqbotAccounts,
    accept: (event) => acceptEvent(dispatcher, event),
    log: componentLog(o.log, 'qqbot'),
  });
  const runtime: StdioPluginRuntime = new StdioPluginRuntime({
    paths,
    records: store,
    logs,
    sink: dispatcher.outbound,
    media: uploads,
    settings: settingsForInitialize(store, settings),
    hostVersion: o.version,
    timings: o.runtimeTimings,
    ...(o.isolation ? { isolation: o.isolation } : {}),
    onStatusChange: (id, status) => {
      o.metrics?.pluginStatus(id, status);
      cluster?.statusChanged(id, status);
    },
  });
  if (cluster) cluster.attach(runtime);
  // What the installer and the admin API start and stop: in a cluster, through the plugin's lease.
  const lifecycle: PluginRuntime = cluster ? cluster.runtimeFacade() : runtime;
  const installer = new PluginInstaller({
    paths,
    store,
    locks,
    pendingUpdates: stores.pendingUpdates,
    archives: stores.archives,
    runtime: lifecycle,
    log: componentLog(o.log, 'installer'),
    onStep: o.onInstallStep,
  });
  const recovery = await installer.init();
  if (stores.archives) {
    // Packages installed or updated through another host sharing the store are unpacked here before anything starts.
    for (const [id, done] of Object.entries(await installer.syncPackages())) {
      if (done === 'unpacked') o.log('info', `unpacked ${id} from the package store`);
      if (done === 'removed') o.log('info', `removed ${id}, uninstalled through another host`);
      if (done === 'missing') o.log('warn', `the package of ${id} is not in the package store; install it again`);
    }
    // Archives no installed version names go (an hour's grace spares one another host stored for an install under way).
    const installed = new Set((await store.list()).flatMap((r) => (r.transport === 'stdio-jsonrpc' ? [r.packageSha256] : [])));
    const removed = await stores.archives.retainOnly(installed, 60 * 60_000);
    if (removed) o.log('info', `removed ${removed} package archives no installed version uses from the package store`);
  }
  await qqbotAccounts.load(o.qqbot?.accounts ?? []);
  for (const a of qqbotAccounts.list())
    o.log(
      'info',
      `QQ Bot account ${a.id} (app id ${a.config.appId}, ${a.source === 'file' ? 'accounts file' : 'added through the admin API'})`,
    );
  await httpPlugins.load();
  // Hosts sharing a database: what another host changes reaches this one within a second (PostgreSQL
  // notifications). The registry and settings are read from the database on every request already;
  // HTTP plugins' endpoints (who gets events) are brought in line here.
  const stopWatching = stores.shared
    ? await stores.watch?.((change) => {
        const follow = (pluginId: string) =>
          Promise.all([httpPlugins.sync(pluginId), installer.syncPackage(pluginId)]).catch((e: Error) =>
            o.log('warn', `could not follow a change of ${pluginId}: ${e.message}`),
          );
        if (change.kind === 'plugin') void follow(change.pluginId);
        if (change.kind === 'plugin' || change.kind === 'all') cluster?.pluginChanged();
        if (change.kind === 'all') {
          o.log('warn', "the connection that follows other hosts' changes was lost and made again; reading every plugin again");
          const known = httpPlugins.liveEndpoints().map((e) => e.pluginId);
          void store.list().then((records) => new Set([...known, ...records.map((r) => r.pluginId)]).forEach((id) => void follow(id)));
        }
      })
    : undefined;
  await cluster?.open();
  const healthEvery = o.httpHealthCheckMilliseconds ?? 30_000;
  if (healthEvery > 0) httpPlugins.startHealthChecks(healthEvery);
  const token = await ensureAdminToken(store, { token: o.adminToken, reset: o.resetAdminToken });
  // Sessions outlive a restart in the SQL store: a new admin token ends those begun with the old one.
  if (token.replaced && stores.sessions) {
    const ended = await stores.sessions.clear();
    if (ended > 0)
      o.log('info', `the admin token changed: ended ${ended} admin app session${ended === 1 ? '' : 's'} begun with the old one`);
  }

  // Every wrong admin token and throttle is logged with its client address (security.md asks operators to watch them).
  const authThrottle = new AuthThrottle({ log: (m) => o.log('warn', m, { component: 'auth' }) });
  const queues = () => new Map(dispatcher.queueStats().map(({ pluginId, ...q }) => [pluginId, q]));
  // An event another replica received is in the shared log only (bounded by its capacity, as GET /api/events is).
  const eventOf = async (eventId: string) =>
    dispatcher.events.get(eventId) ??
    (stores.sharedEvents
      ? (await stores.sharedEvents({ limit: dispatcher.events.capacity })).find((r) => r.eventId === eventId)
      : undefined);
  const app = createApp({
    paths,
    store,
    settings,
    installer,
    locks,
    runtime: lifecycle,
    logs,
    http: httpPlugins,
    queues,
    adminTokenHash: token.hash,
    ...(stores.availability ? { storeAvailability: stores.availability } : {}),
    maxUploadBytes: o.maxUploadBytes,
    authThrottle,
    sessions: { ...o.sessions, ...(stores.sessions ? { store: stores.sessions } : {}) },
    rootRouters: [
      // Before the admin app, whose pages answer every other path.
      ...(o.metrics && (o.metricsOnMainListener ?? true) ? [metricsRouter(o.metrics, token.hash, authThrottle)] : []),
      ...(o.adminAppDir ? [adminAppRouter(o.adminAppDir)] : []),
    ],
    version: o.version,
    doctorWorker: existsSync(DOCTOR_WORKER) ? DOCTOR_WORKER : undefined,
    ...(o.isolation ? { doctorIsolation: doctorIsolation(o.isolation, paths.stateDir) } : {}),
    apiRoutes: [
      ...consoleRoutes({
        dispatcher,
        provider,
        store: stores.availability,
        ...(stores.sharedEvents ? { sharedEvents: stores.sharedEvents } : {}),
      }),
      ...consoleMediaRoutes(uploads),
      ...httpRegistrationRoutes({ registry: httpPlugins }),
      ...statsRoutes({ paths, store, installer, runtime: lifecycle, http: httpPlugins, queues, stats, pending: installer.pending }),
      ...eventLogRoutes({ event: eventOf, logs }),
      ...qqbotRoutes({ accounts: qqbotAccounts, webhook: qqbotWebhook, publicUrl: o.qqbot?.publicUrl }),
    ],
    log: (m) => o.log('error', m, { component: 'api' }),
  });

  return {
    app,
    store,
    runtime,
    httpPlugins,
    dispatcher,
    qqbotAccounts,
    ...(o.metrics ? { metrics: o.metrics } : {}),
    authCounters: authThrottle.counters,
    recovery,
    ...(cluster ? { cluster } : {}),
    generatedToken: token.generated,
    async expectEnabledPlugins() {
      // In a cluster the durable queue holds events until the lease holder runs the plugin.
      if (cluster) return;
      const invalid = new Set(installer.invalidPackages().map((i) => i.pluginId));
      runtime.expectBoot(
        (await store.list()).filter(
          (r): r is StdioPluginRecord => r.transport === 'stdio-jsonrpc' && r.enabled && !invalid.has(r.pluginId),
        ),
      );
    },
    async startEnabledPlugins() {
      // A host killed outright leaves its plugins running; end them before starting them again.
      for (const pid of runtime.reapLeftovers())
        o.log('warn', `ended a plugin process group left running by a previous host process (pid ${pid})`);
      for (const pid of reapDoctorProcesses(paths))
        o.log('warn', `ended a conformance run's plugin process group left running by a previous host process (pid ${pid})`);
      // Events a previous run accepted and did not log final are routed again (they wait for plugins as they start).
      const left = (await stores.inbox?.unsettled()) ?? [];
      if (left.length > 0) {
        o.log('info', `routing again ${left.length} accepted event${left.length === 1 ? '' : 's'} the previous run did not finish`);
        // Their deliveries may have been recorded before the crash: the durable queue is read for each first.
        cluster?.resuming(left.map((e) => e.eventId));
        dispatcher.resume(left);
      }
      // In a cluster, a plugin starts on the replica that takes its lease.
      if (cluster) return cluster.start();
      const enabled = (await store.list()).filter((r: PluginRecord) => r.transport === 'stdio-jsonrpc' && r.enabled);
      await Promise.all(
        enabled.map((r) =>
          runtime.startOnBoot(r.pluginId).then(
            (status) => {
              if (status.state === 'failed' && status.stateReason)
                o.log('warn', `${r.pluginId} ${status.stateReason}`, { component: 'runtime', pluginId: r.pluginId });
            },
            (e: Error) => o.log('warn', `could not start ${r.pluginId}: ${e.message}`, { component: 'runtime', pluginId: r.pluginId }),
          ),
        ),
      );
    },
    async close() {
      await stopWatching?.();
      await cluster?.close();
      await runtime.dispose();
      await httpPlugins.close();
      await qqbotAccounts.close();
      await logs.flush();
      await uploads.close();
      await stores.close();
    },
  };
}

/**
 * Conformance runs start a plugin as its runtime does: in the mode the runtime chose, as the plugin's uid
 * (the same record of uids), with the same limits and network.
 */
function doctorIsolation(isolation: NonNullable<StdioRuntimeOptions['isolation']>, stateDir: string): DoctorIsolation {
  const { support, settings } = isolation;
  const mode = settings.request === 'auto' ? strongestMode(support) : settings.request;
  const uids = mode === 'same-user' ? null : new PluginUids(join(stateDir, PLUGIN_UIDS_FILE), settings.uidRange);
  return {
    support: portableSupport(support),
    settings: { ...settings, request: mode },
    stateDir,
    ...(uids ? { uidOf: (pluginId: string) => uids.uidOf(pluginId) } : {}),
  };
}
