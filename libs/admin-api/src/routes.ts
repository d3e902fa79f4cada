import type { HostErrorCode } from '@host/host-errors';
import {
  ConsoleChatEventRequestSchema,
  ConsoleEventsQuerySchema,
  ConsoleMessageRequestSchema,
  ConsoleMessageResponseSchema,
  ConsoleStreamDataSchema,
  EventListResponseSchema,
  EventsQuerySchema,
} from './console';
import { defineContract, type RouteContract } from './contract';
import { DoctorResponseSchema, LastDoctorResponseSchema } from './doctor';
import { EventLogsQuerySchema, EventLogsResponseSchema } from './event-logs';
import {
  ConfirmHttpRefreshBodySchema,
  RefreshHttpPluginResponseSchema,
  RegisterHttpPluginResponseSchema,
  RegisterHttpPluginSchema,
} from './http-plugins';
import {
  CancelledResponseSchema,
  ConfirmUpdateBodySchema,
  InstallResponseSchema,
  PackageUploadFieldsSchema,
  PendingUpdateResponseSchema,
} from './packages';
import {
  DataDeletedResponseSchema,
  HealthResponseSchema,
  LogLineSchema,
  LogsQuerySchema,
  LogsResponseSchema,
  LogStreamQuerySchema,
  PluginListResponseSchema,
  PluginResponseSchema,
  ReadyResponseSchema,
  SettingsPutBodySchema,
  SettingsResponseSchema,
  SettingsPutResponseSchema,
  UninstallResponseSchema,
} from './plugins';
import { SessionResponseSchema, SignInBodySchema, SignInResponseSchema, SignOutResponseSchema } from './session';
import { StatsResponseSchema } from './stats';

import {
  QqBotAccountDeletedSchema,
  QqBotAccountInputSchema,
  QqBotAccountListResponseSchema,
  QqBotAccountResponseSchema,
  QqBotAckResponseSchema,
  QqBotValidationResponseSchema,
} from './qqbot';

const QQBOT_ACCOUNT_PARAM = { accountId: 'The id of the QQ Bot account, for example main.' };
const PLUGIN_PARAM = { pluginId: 'The plugin id, for example com.example.echo.' };
const PENDING_PARAM = { id: 'Pending update id from the UPDATE_CONFIRMATION_REQUIRED answer.' };

/** Why a stdio plugin process did not start (the runtime's start failures). */
const START_ERRORS: HostErrorCode[] = [
  'PLUGIN_START_FAILED',
  'PLUGIN_START_TIMEOUT',
  'PLUGIN_COMMAND_NOT_FOUND',
  'PLUGIN_WORKDIR_INVALID',
  'PLUGIN_HANDSHAKE_INVALID',
  'PLUGIN_STDOUT_POLLUTION',
];

/** Why fetching an HTTP plugin's manifest failed, at registration and refresh. */
const MANIFEST_FETCH_ERRORS: HostErrorCode[] = [
  'REGISTRATION_ADDRESS_REFUSED',
  'REGISTRATION_UNREACHABLE',
  'REGISTRATION_TIMEOUT',
  'REGISTRATION_TLS_FAILED',
  'REGISTRATION_REDIRECT',
  'REGISTRATION_HTTP_STATUS',
  'REGISTRATION_NOT_JSON',
  'REGISTRATION_TOO_LARGE',
  'REGISTRATION_MANIFEST_TOO_COMPLEX',
  'REGISTRATION_MANIFEST_INVALID',
  'REGISTRATION_CAPABILITY_MISSING',
  'REGISTRATION_PROTOCOL_UNSUPPORTED',
];

/** Why a package archive or its manifest was refused. */
const PACKAGE_ERRORS: HostErrorCode[] = [
  'INSTALL_NOT_A_ZIP',
  'INSTALL_ENCRYPTED_ENTRY',
  'INSTALL_UNSUPPORTED_COMPRESSION',
  'INSTALL_PATH_TRAVERSAL',
  'INSTALL_ABSOLUTE_PATH',
  'INSTALL_BACKSLASH_PATH',
  'INSTALL_INVALID_ENTRY_NAME',
  'INSTALL_LINK_ENTRY',
  'INSTALL_SPECIAL_ENTRY',
  'INSTALL_DUPLICATE_ENTRY',
  'INSTALL_CASE_COLLISION',
  'INSTALL_TOO_MANY_ENTRIES',
  'INSTALL_TOO_LARGE_UNPACKED',
  'INSTALL_COMPRESSION_RATIO',
  'INSTALL_OVERLAPPING_ENTRIES',
  'INSTALL_ZIP_AMBIGUOUS',
  'INSTALL_ENTRY_CORRUPT',
  'INSTALL_MANIFEST_MISSING',
  'INSTALL_LAYOUT_AMBIGUOUS',
  'INSTALL_FOLDER_MISMATCH',
  'INSTALL_MANIFEST_INVALID_JSON',
  'INSTALL_MANIFEST_INVALID',
  'INSTALL_TRANSPORT_UNSUPPORTED',
  'INSTALL_ENTRY_MISSING',
  'INSTALL_DEPENDENCY_MISSING',
  'INSTALL_PLATFORM_UNSUPPORTED',
  'INSTALL_WORKDIR_OUTSIDE',
  'INSTALL_WORKDIR_MISSING',
];

function lifecycle(action: 'start' | 'stop' | 'restart') {
  return defineContract({
    method: 'post',
    path: `/plugins/{pluginId}/${action}`,
    summary: `${action[0]!.toUpperCase()}${action.slice(1)} a plugin`,
    description:
      action === 'stop'
        ? 'Stops the process (stdio) or disables delivery (HTTP); an operator stop never triggers a restart, and the plugin is not started with the host.'
        : 'Starts the process (stdio) or enables delivery (HTTP); the plugin is then started whenever the host starts.',
    tags: ['plugins'],
    params: PLUGIN_PARAM,
    responses: { 200: { description: 'The plugin after the action.', schema: PluginResponseSchema } },
    errors: ['PLUGIN_NOT_FOUND', 'PLUGIN_STATE_CONFLICT', 'RUNTIME_UNAVAILABLE', ...(action === 'stop' ? [] : START_ERRORS)],
  });
}

/**
 * Every route of the admin API under /api, the console and HTTP plugin
 * registration routes included. The host implements each one; the OpenAPI
 * document and the admin app read them from here.
 */
export const ADMIN_ROUTES = {
  health: defineContract({
    method: 'get',
    path: '/health',
    summary: 'Liveness of the host',
    auth: false,
    tags: ['host'],
    responses: { 200: { description: 'The host is up.', schema: HealthResponseSchema } },
    errors: [],
  }),
  ready: defineContract({
    method: 'get',
    path: '/ready',
    summary: 'Readiness of the host: whether it can take requests and events now',
    description:
      'Apart from liveness (GET /api/health, which answers while the process runs): 503 STORE_UNAVAILABLE while the database server of HOST_DATABASE_URL cannot be reached, 200 once it answers again. Load balancers and orchestrators route traffic by this one.',
    auth: false,
    tags: ['host'],
    responses: { 200: { description: 'The host can use its store.', schema: ReadyResponseSchema } },
    errors: ['STORE_UNAVAILABLE'],
  }),
  stats: defineContract({
    method: 'get',
    path: '/stats',
    summary: "The dashboard's figures: the last hour in 10 s buckets, each plugin's health and the alerts",
    description:
      "Events in, deliveries by outcome and end-to-end p50 and p99 latency per 10 s bucket over the last hour, counted on this host from the same event log updates as the Prometheus metrics (kept even when metrics are off); each plugin's state, error rate over the last 5 minutes, queue and last error; and the alerts that need the operator. Cheap enough to poll every few seconds.",
    tags: ['host'],
    responses: { 200: { description: 'The figures now.', schema: StatsResponseSchema } },
    errors: [],
  }),
  openapi: defineContract({
    method: 'get',
    path: '/openapi.json',
    summary: 'This OpenAPI 3.1 document',
    tags: ['host'],
    responses: { 200: { description: 'The document.' } },
    errors: [],
  }),

  signIn: defineContract({
    method: 'post',
    path: '/session',
    summary: 'Sign in: exchange the admin token for a session cookie',
    description:
      'Answers 201 with the session and sets it as an HttpOnly, SameSite=Strict cookie (host_admin_session, path /api), so page script never holds the token. Requests with the cookie that change something must send the X-CSRF-Token header. Sessions end after their lifetime, when idle, at sign-out, when newer sessions push them out (a bounded number is kept) and, with the file store, when the host restarts (the SQL store keeps them in the database, shared by every replica). Scripts keep sending "Authorization: Bearer <token>" instead.',
    tags: ['session'],
    auth: false,
    body: SignInBodySchema,
    responses: { 201: { description: 'Signed in; Set-Cookie carries the session id.', schema: SignInResponseSchema } },
    errors: ['BAD_REQUEST', 'SESSION_TOKEN_INVALID', 'SESSION_SIGN_IN_THROTTLED', 'ORIGIN_REFUSED'],
  }),
  getSession: defineContract({
    method: 'get',
    path: '/session',
    summary: 'The current session and its CSRF token',
    description: 'What the admin app asks when it loads: whether the cookie still holds a session, and the CSRF token to send.',
    tags: ['session'],
    responses: { 200: { description: 'How the request was authenticated.', schema: SessionResponseSchema } },
    errors: [],
  }),
  signOut: defineContract({
    method: 'delete',
    path: '/session',
    summary: 'Sign out: end the session and clear its cookie',
    tags: ['session'],
    responses: { 200: { description: 'Signed out.', schema: SignOutResponseSchema } },
    errors: [],
  }),

  listPlugins: defineContract({
    method: 'get',
    path: '/plugins',
    summary: 'List plugins',
    description: 'Registered stdio and HTTP plugins, plus packages found on disk whose manifest does not validate (state invalidManifest).',
    tags: ['plugins'],
    responses: { 200: { description: 'Every plugin.', schema: PluginListResponseSchema } },
    errors: [],
  }),
  getPlugin: defineContract({
    method: 'get',
    path: '/plugins/{pluginId}',
    summary: 'One plugin with its manifest, runtime details, backups and locations',
    tags: ['plugins'],
    params: PLUGIN_PARAM,
    responses: { 200: { description: 'The plugin.', schema: PluginResponseSchema } },
    errors: ['PLUGIN_NOT_FOUND'],
  }),
  startPlugin: lifecycle('start'),
  stopPlugin: lifecycle('stop'),
  restartPlugin: lifecycle('restart'),
  uninstallPlugin: defineContract({
    method: 'delete',
    path: '/plugins/{pluginId}',
    summary: 'Uninstall a plugin (keeps its data and config)',
    description:
      'Stops a running stdio plugin, moves its package folder to backups/<pluginId>/ and removes it from the registry. HTTP plugins are unregistered. Data and config stay until DELETE /api/plugins/{pluginId}/data.',
    tags: ['plugins'],
    params: PLUGIN_PARAM,
    responses: { 200: { description: 'Uninstalled.', schema: UninstallResponseSchema } },
    errors: ['PLUGIN_NOT_FOUND', 'PLUGIN_STATE_CONFLICT', 'RUNTIME_UNAVAILABLE'],
  }),
  deletePluginData: defineContract({
    method: 'delete',
    path: '/plugins/{pluginId}/data',
    summary: "Delete a plugin's data, config and cache",
    description: 'The only action that deletes plugin data. Refused while the plugin runs. Works after uninstall too.',
    tags: ['plugins'],
    params: PLUGIN_PARAM,
    responses: { 200: { description: 'Deleted.', schema: DataDeletedResponseSchema } },
    errors: ['PLUGIN_NOT_FOUND', 'PLUGIN_STATE_CONFLICT'],
  }),
  pluginLogs: defineContract({
    method: 'get',
    path: '/plugins/{pluginId}/logs',
    summary: "Tail of a plugin's log",
    tags: ['plugins'],
    params: PLUGIN_PARAM,
    query: LogsQuerySchema,
    responses: { 200: { description: 'The most recent lines, oldest first.', schema: LogsResponseSchema } },
    errors: ['PLUGIN_NOT_FOUND', 'BAD_REQUEST', 'RUNTIME_UNAVAILABLE'],
  }),
  runDoctor: defineContract({
    method: 'post',
    path: '/plugins/{pluginId}/doctor',
    summary: 'Run the protocol conformance suite against an installed stdio plugin',
    description:
      'Starts separate processes of the installed package, as the host starts the plugin but with temporary data, config and cache folders and no stored settings, plays the conformance scenarios (docs/protocol/v2.md section 14) and answers with the report when they end (seconds; longer for a plugin whose handlers are slow). The running instance and the plugin data are not touched. The result is stored and served by GET on the same path. Never run at install time. A run lasts at most two minutes (then 504 DOCTOR_RUN_TIMEOUT) and no longer than its request: when the client disconnects, the run and its plugin processes end.',
    tags: ['plugins'],
    params: PLUGIN_PARAM,
    responses: { 200: { description: 'The report (also when the plugin fails checks).', schema: DoctorResponseSchema } },
    errors: ['PLUGIN_NOT_FOUND', 'PLUGIN_STATE_CONFLICT', 'DOCTOR_RUN_TIMEOUT'],
  }),
  lastDoctor: defineContract({
    method: 'get',
    path: '/plugins/{pluginId}/doctor',
    summary: 'The last conformance report of a plugin',
    tags: ['plugins'],
    params: PLUGIN_PARAM,
    responses: { 200: { description: 'The stored report, or null.', schema: LastDoctorResponseSchema } },
    errors: ['PLUGIN_NOT_FOUND'],
  }),
  followPluginLogs: defineContract({
    method: 'get',
    path: '/plugins/{pluginId}/logs/stream',
    summary: "Follow a plugin's log as Server-Sent Events",
    description:
      'Sends the most recent lines (tail), then every new line as it is written, each as `event: line` with the line as data. A client that does not read is disconnected (the host buffers at most 1 MiB for it); the stream sends `retry:` and a reconnect starts again with the tail. At most 32 streams are open at once: a new one ends the oldest.',
    tags: ['plugins'],
    params: PLUGIN_PARAM,
    query: LogStreamQuerySchema,
    responses: {
      200: {
        description: "text/event-stream; the schema is that of each message's data.",
        contentType: 'text/event-stream',
        schema: LogLineSchema,
      },
    },
    errors: ['PLUGIN_NOT_FOUND', 'BAD_REQUEST', 'RUNTIME_UNAVAILABLE'],
  }),
  getSettings: defineContract({
    method: 'get',
    path: '/plugins/{pluginId}/settings',
    summary: "A plugin's settings form and current values",
    description:
      'Values are checked against settings.configSchema of the manifest. Secret values are never returned, only whether one is set.',
    tags: ['settings'],
    params: PLUGIN_PARAM,
    responses: { 200: { description: 'Schema and values.', schema: SettingsResponseSchema } },
    errors: ['PLUGIN_NOT_FOUND'],
  }),
  putSettings: defineContract({
    method: 'put',
    path: '/plugins/{pluginId}/settings',
    summary: "Change a plugin's settings",
    description:
      "Stored by the settings store, by default in plugin-data/<pluginId>/config/settings.json (kept across updates and uninstall). A blank or null secret keeps the stored secret; null clears other fields; omitted fields keep their value. A running stdio plugin gets the new values without a restart when its SDK takes them (settings.changed); delivery says whether it did. When the running plugin refuses them, the previous values are kept and the answer is SETTINGS_REFUSED with the plugin's reason.",
    tags: ['settings'],
    params: PLUGIN_PARAM,
    body: SettingsPutBodySchema,
    responses: {
      200: {
        description: 'Schema, the new values, and whether the running plugin took them (delivery).',
        schema: SettingsPutResponseSchema,
      },
    },
    errors: ['PLUGIN_NOT_FOUND', 'BAD_REQUEST', 'SETTINGS_INVALID', 'SETTINGS_REFUSED'],
  }),

  uploadPackage: defineContract({
    method: 'post',
    path: '/plugins/packages',
    summary: 'Upload a stdio plugin package (ZIP)',
    description:
      'Installs a new plugin (201). When the pluginId is installed already, the upload becomes a pending update (409 UPDATE_CONFIRMATION_REQUIRED with pendingUpdate: installed and incoming details and the changes) that must be confirmed or cancelled. Nothing in the archive is executed.',
    tags: ['packages'],
    multipart: { fileField: 'package', fileDescription: 'The plugin ZIP.', fields: PackageUploadFieldsSchema },
    responses: { 201: { description: 'Installed.', schema: InstallResponseSchema } },
    errors: [
      'INSTALL_NO_FILE',
      'BAD_REQUEST',
      'INSTALL_UPLOAD_TOO_LARGE',
      'INSTALL_UPLOADS_BUSY',
      ...PACKAGE_ERRORS,
      'INSTALL_ID_TAKEN',
      'UPDATE_CONFIRMATION_REQUIRED',
      'INSTALL_FAILED',
    ],
  }),
  getPendingUpdate: defineContract({
    method: 'get',
    path: '/plugins/packages/pending/{id}',
    summary: 'A pending update (installed and incoming details, changes)',
    tags: ['packages'],
    params: PENDING_PARAM,
    responses: { 200: { description: 'The pending update.', schema: PendingUpdateResponseSchema } },
    errors: ['PENDING_UPDATE_NOT_FOUND'],
  }),
  confirmUpdate: defineContract({
    method: 'post',
    path: '/plugins/packages/pending/{id}/confirm',
    summary: 'Confirm a pending update',
    description:
      'Re-checks the archive SHA-256 and that the installed version did not change, stops the plugin if it runs, moves the installed version to backups/<pluginId>/ (newest 3 kept), puts the new one in place (restoring the backup if anything fails) and starts the plugin again if it was running.',
    tags: ['packages'],
    params: PENDING_PARAM,
    body: ConfirmUpdateBodySchema,
    responses: { 200: { description: 'Updated.', schema: InstallResponseSchema } },
    errors: [
      'BAD_REQUEST',
      'PENDING_UPDATE_NOT_FOUND',
      'PENDING_UPDATE_STALE',
      'INSTALL_PLUGIN_RUNNING',
      'INSTALL_FAILED',
      'INSTALL_TOO_LARGE_UNPACKED',
      'INSTALL_COMPRESSION_RATIO',
    ],
  }),
  restoreBackup: defineContract({
    method: 'post',
    path: '/plugins/{pluginId}/backups/{name}/restore',
    summary: 'Restore a kept version of a stdio plugin from its backups',
    description:
      'Packs the backup folder and hands it to the installer as an upload: when the plugin is installed, the answer is 409 UPDATE_CONFIRMATION_REQUIRED with pendingUpdate (installed and restored versions side by side), confirmed or cancelled like any update; an uninstalled plugin is installed again (201), not started.',
    tags: ['packages'],
    params: { ...PLUGIN_PARAM, name: 'The backup folder name, from backups in GET /api/plugins/{pluginId}.' },
    responses: { 201: { description: 'Installed from the backup.', schema: InstallResponseSchema } },
    errors: ['PLUGIN_NOT_FOUND', 'BACKUP_NOT_FOUND', ...PACKAGE_ERRORS, 'UPDATE_CONFIRMATION_REQUIRED', 'INSTALL_FAILED'],
  }),
  cancelUpdate: defineContract({
    method: 'delete',
    path: '/plugins/packages/pending/{id}',
    summary: 'Cancel a pending update',
    tags: ['packages'],
    params: PENDING_PARAM,
    responses: { 200: { description: 'Cancelled; the stored archive is deleted.', schema: CancelledResponseSchema } },
    errors: ['PENDING_UPDATE_NOT_FOUND'],
  }),

  registerHttpPlugin: defineContract({
    method: 'post',
    path: '/plugins/http',
    summary: 'Register an HTTP plugin by base URL',
    description:
      'Fetches and validates GET {baseUrl}/host/plugin/manifest, then registers the plugin. The 201 answer shows the signing secret once.',
    tags: ['plugins'],
    body: RegisterHttpPluginSchema,
    responses: { 201: { description: 'The registered plugin and its signing secret.', schema: RegisterHttpPluginResponseSchema } },
    errors: ['BAD_REQUEST', 'REGISTRATION_URL_INVALID', 'REGISTRATION_URL_CREDENTIALS', ...MANIFEST_FETCH_ERRORS, 'REGISTRATION_ID_TAKEN'],
  }),
  refreshHttpPlugin: defineContract({
    method: 'post',
    path: '/plugins/{pluginId}/refresh',
    summary: "Re-fetch an HTTP plugin's manifest (after its own deployment updated it)",
    tags: ['plugins'],
    params: PLUGIN_PARAM,
    responses: {
      200: {
        description:
          'The plugin with previousVersion, changed and changes; a manifest that adds capabilities, permissions, subscriptions or commands is not stored until confirmed (confirmationRequired).',
        schema: RefreshHttpPluginResponseSchema,
      },
    },
    errors: ['PLUGIN_NOT_FOUND', 'PLUGIN_STATE_CONFLICT', ...MANIFEST_FETCH_ERRORS],
  }),
  confirmHttpRefresh: defineContract({
    method: 'post',
    path: '/plugins/{pluginId}/refresh/confirm',
    summary: 'Confirm a refreshed HTTP plugin manifest that adds capabilities, permissions, subscriptions or commands',
    description:
      'Fetches the manifest again and stores it only when its SHA-256 is the one the refresh showed; otherwise answers 409 and nothing changes.',
    tags: ['plugins'],
    params: PLUGIN_PARAM,
    body: ConfirmHttpRefreshBodySchema,
    responses: { 200: { description: 'The plugin with the confirmed manifest.', schema: RefreshHttpPluginResponseSchema } },
    errors: ['BAD_REQUEST', 'PLUGIN_NOT_FOUND', 'PLUGIN_STATE_CONFLICT', ...MANIFEST_FETCH_ERRORS],
  }),

  sendConsoleMessage: defineContract({
    method: 'post',
    path: '/console/messages',
    summary: 'Send a message as a user of the simulated bot and collect what plugins answer',
    description:
      'Delivers a message.created event and answers once every chosen plugin acknowledged or failed (and after waitMs more, when given) with {eventId, deliveries, outbound, refused}; outbound[].body is the exact QQ Bot request body. When the events waiting for plugins are at their bound, the event is refused before it is accepted (503 EVENTS_OVERLOADED): send it again later.',
    tags: ['console'],
    body: ConsoleMessageRequestSchema,
    responses: { 200: { description: 'Deliveries and rendered outbound messages.', schema: ConsoleMessageResponseSchema } },
    errors: ['BAD_REQUEST', 'STORE_UNAVAILABLE', 'EVENTS_OVERLOADED'],
  }),
  sendConsoleChatEvent: defineContract({
    method: 'post',
    path: '/console/chat-events',
    summary: 'Send a button click or a bot or conversation event of the simulated bot and collect what plugins answer',
    description:
      "Delivers an interaction.created (a click on a callback button: its data, the conversation and the clicking user), bot.added, bot.removed or conversation.opened event, as the QQ Bot provider makes them, to the plugins whose manifest subscribes to its type (events.deliver), and answers as POST /console/messages does. A click and bot.added and conversation.opened take replies (on QQ Bot by the event's id), bot.removed none (message.reference.unavailable).",
    tags: ['console'],
    body: ConsoleChatEventRequestSchema,
    responses: { 200: { description: 'Deliveries and rendered outbound messages.', schema: ConsoleMessageResponseSchema } },
    errors: ['BAD_REQUEST', 'STORE_UNAVAILABLE', 'EVENTS_OVERLOADED'],
  }),
  consoleEvents: defineContract({
    method: 'get',
    path: '/console/events',
    summary: 'Server-Sent Events stream of event records (deliveries and outbound messages)',
    description: 'Each message has `event: <type>` and `data: <JSON>`; comments keep the connection alive.',
    tags: ['console'],
    query: ConsoleEventsQuerySchema,
    responses: {
      200: {
        description: "text/event-stream; the schema is that of each message's data.",
        contentType: 'text/event-stream',
        schema: ConsoleStreamDataSchema,
      },
    },
    errors: ['BAD_REQUEST'],
  }),
  consoleMedia: defineContract({
    method: 'get',
    path: '/console/media/{mediaId}',
    summary: "The bytes of a plugin's uploaded media, as the console shows an image or file it sent",
    description:
      "Images (PNG, JPEG, GIF, WebP) are answered with their content type and other media as application/octet-stream with Content-Disposition attachment; every answer has X-Content-Type-Options nosniff and a Content-Security-Policy that runs nothing. The console's outgoing image and file bodies name this path in media.url.",
    tags: ['console'],
    params: { mediaId: 'The mediaId of an image or file part (media.finish).' },
    responses: { 200: { description: 'The bytes.', contentType: 'application/octet-stream' } },
    errors: ['MEDIA_NOT_FOUND'],
  }),
  listEvents: defineContract({
    method: 'get',
    path: '/events',
    summary: 'Recent event records',
    description:
      "Replicas sharing a PostgreSQL server answer from the event log they share, so each answers the same records, with every plugin's deliveries and replies wherever it ran (503 STORE_UNAVAILABLE while the server cannot be reached).",
    tags: ['console'],
    query: EventsQuerySchema,
    responses: { 200: { description: 'The newest event records, newest first.', schema: EventListResponseSchema } },
    errors: ['BAD_REQUEST'],
  }),
  eventLogs: defineContract({
    method: 'get',
    path: '/events/{eventId}/logs',
    summary: 'The plugin log lines written for one event',
    description:
      "For each plugin the event was delivered to, in delivery order, the lines its handler wrote with log.write for this event (the SDKs' handler loggers name the event; the host keeps the name only for an event it delivered to that plugin), oldest first, the newest `limit` of them, read from the plugin's bounded log files on this host. stderr lines name no event and are not included. An HTTP plugin has no log.write: its entry says so (`kept: false`). The event is looked up in this host's event log.",
    tags: ['console'],
    params: { eventId: 'The eventId of an event record (GET /api/events).' },
    query: EventLogsQuerySchema,
    responses: { 200: { description: "Each recipient's log lines for the event.", schema: EventLogsResponseSchema } },
    errors: ['EVENT_NOT_FOUND', 'BAD_REQUEST', 'RUNTIME_UNAVAILABLE'],
  }),

  listQqBotAccounts: defineContract({
    method: 'get',
    path: '/qqbot/accounts',
    summary: 'QQ Bot accounts with their webhook URLs and last events',
    description: 'Secrets are never shown. webhookUrl is the callback URL to register on the platform for each account.',
    tags: ['qqbot'],
    responses: { 200: { description: 'Every configured account.', schema: QqBotAccountListResponseSchema } },
    errors: [],
  }),
  getQqBotAccount: defineContract({
    method: 'get',
    path: '/qqbot/accounts/{accountId}',
    summary: 'One QQ Bot account',
    tags: ['qqbot'],
    params: QQBOT_ACCOUNT_PARAM,
    responses: { 200: { description: 'The account, without its secret.', schema: QqBotAccountResponseSchema } },
    errors: ['QQBOT_ACCOUNT_NOT_FOUND'],
  }),
  addQqBotAccount: defineContract({
    method: 'post',
    path: '/qqbot/accounts',
    summary: 'Add a QQ Bot account (app id and secret); its webhook takes events at once',
    description: 'The account is kept in the data directory (the secret in a file only the host user can read) and survives restarts.',
    tags: ['qqbot'],
    body: QqBotAccountInputSchema,
    responses: { 201: { description: 'The account, without its secret.', schema: QqBotAccountResponseSchema } },
    errors: ['BAD_REQUEST', 'QQBOT_ACCOUNT_EXISTS'],
  }),
  removeQqBotAccount: defineContract({
    method: 'delete',
    path: '/qqbot/accounts/{accountId}',
    summary: 'Remove a QQ Bot account added through the API',
    tags: ['qqbot'],
    params: QQBOT_ACCOUNT_PARAM,
    responses: { 200: { description: 'Removed; its webhook answers 404 from now on.', schema: QqBotAccountDeletedSchema } },
    errors: ['QQBOT_ACCOUNT_NOT_FOUND', 'QQBOT_ACCOUNT_READ_ONLY'],
  }),
  qqBotWebhook: defineContract({
    method: 'post',
    path: '/qqbot/webhook/{accountId}',
    summary: 'Webhook of a QQ Bot account (called by the platform, authenticated by its Ed25519 signature)',
    description:
      'No admin token: op 13 (callback validation) is answered with {plain_token, signature}; every other request must carry X-Signature-Ed25519 over X-Signature-Timestamp and the raw body, and op 0 events are answered with {op: 12} before plugins run.',
    tags: ['qqbot'],
    auth: false,
    params: QQBOT_ACCOUNT_PARAM,
    responses: {
      200: {
        description: 'op 13: {plain_token, signature}; op 0 and others: {op: 12}.',
        schema: QqBotValidationResponseSchema.or(QqBotAckResponseSchema),
      },
    },
    errors: [
      'QQBOT_ACCOUNT_NOT_FOUND',
      'QQBOT_SIGNATURE_INVALID',
      'QQBOT_TIMESTAMP_STALE',
      'QQBOT_EVENT_REPLAYED',
      'QQBOT_PAYLOAD_INVALID',
      'QQBOT_PAYLOAD_TOO_COMPLEX',
      'QQBOT_PAYLOAD_TOO_LARGE',
      'STORE_UNAVAILABLE',
    ],
  }),
} as const;

export type AdminRouteName = keyof typeof ADMIN_ROUTES;

/** The contracts of ADMIN_ROUTES as a list. */
export const ADMIN_ROUTE_LIST: readonly RouteContract<unknown, unknown>[] = Object.values(ADMIN_ROUTES);
