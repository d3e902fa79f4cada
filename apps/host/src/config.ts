import { DEFAULT_MAX_UPLOAD_BYTES, MIN_ADMIN_TOKEN_LENGTH } from '@host/host-api';
import { DEFAULT_MAX_WAITING_EVENTS } from '@host/host-dispatch';
import { classifyAddress, type AddressPolicy } from '@host/host-http';
import { readFileSync, statSync } from 'node:fs';
import { isIP } from 'node:net';
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { DEFAULT_STORE, STORE_KINDS } from './stores';
import { DEFAULT_ISOLATION, DEFAULT_PLUGIN_LIMITS, DEFAULT_UID_RANGE, parseUidRange, type IsolationSettings } from '@host/host-runtime';

function wholeNumber(min: number, max: number) {
  return z.coerce
    .number({ message: 'must be a number' })
    .int({ message: 'must be a whole number' })
    .min(min, { message: `must be from ${min} to ${max} (0: unlimited)` })
    .max(max, { message: `must be from ${min} to ${max} (0: unlimited)` });
}

/** Embedded defaults: a first start needs no configuration at all. */
export const DEFAULT_CONFIG = {
  bind: '127.0.0.1',
  port: 8080,
  dataDir: './data',
  maxUploadBytes: DEFAULT_MAX_UPLOAD_BYTES,
  maxWaitingEvents: DEFAULT_MAX_WAITING_EVENTS,
  store: DEFAULT_STORE,
  pluginIsolation: DEFAULT_ISOLATION.request,
  pluginUidRange: `${DEFAULT_UID_RANGE.first}-${DEFAULT_UID_RANGE.last}`,
  pluginNetwork: DEFAULT_ISOLATION.network,
  pluginMemoryMb: DEFAULT_PLUGIN_LIMITS.memoryBytes / 1024 / 1024,
  pluginMaxProcesses: DEFAULT_PLUGIN_LIMITS.processes,
  pluginMaxOpenFiles: DEFAULT_PLUGIN_LIMITS.openFiles,
  pluginCpuSeconds: DEFAULT_PLUGIN_LIMITS.cpuSeconds,
  logFormat: 'text',
} as const;

/** HOST_METRICS_BIND: an address and port of its own for /metrics, e.g. 127.0.0.1:9464 or [::1]:9464. */
const METRICS_BIND = /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._-]+):(\d{1,5})$/;

export const HostConfigSchema = z.object({
  bind: z
    .string()
    .min(1, { message: 'must not be empty' })
    .regex(/^[A-Za-z0-9.:_\[\]-]+$/, { message: 'must be an IP address or host name' }),
  port: z.coerce
    .number({ message: 'must be a number' })
    .int({ message: 'must be a whole number' })
    .min(0, { message: 'must be from 0 to 65535' })
    .max(65535, { message: 'must be from 0 to 65535' }),
  dataDir: z.string().min(1, { message: 'must not be empty' }),
  adminTokenFile: z.string().min(1, { message: 'must not be empty' }).optional(),
  maxUploadBytes: z.coerce
    .number({ message: 'must be a number of bytes' })
    .int({ message: 'must be a whole number of bytes' })
    .min(1024, { message: 'must be at least 1024 bytes' })
    .max(2 * 1024 * 1024 * 1024, { message: 'must be at most 2 GiB' }),
  maxWaitingEvents: z.coerce
    .number({ message: 'must be a number of events' })
    .int({ message: 'must be a whole number of events' })
    .min(1, { message: 'must be at least 1' })
    .max(10_000_000, { message: 'must be at most 10000000' }),
  httpAllowLoopback: z.enum(['true', 'false'], { message: 'must be "true" or "false"' }).optional(),
  httpAllowPrivate: z.enum(['true', 'false'], { message: 'must be "true" or "false"' }).optional(),
  resetAdminToken: z.boolean(),
  qqbotAccountsFile: z.string().min(1, { message: 'must not be empty' }).optional(),
  publicUrl: z
    .url({ protocol: /^https?$/, message: 'must be an http or https URL, e.g. https://bot.example.com' })
    .refine((u) => !/[?#]/.test(u), { message: 'must not have a query or fragment' })
    .optional(),
  store: z.enum(STORE_KINDS, {
    message: `must be ${STORE_KINDS.map((k) => `"${k}"`).join(' or ')} (leave it unset for the default)`,
  }),
  databaseUrl: z
    .url({ protocol: /^postgres(ql)?$/, message: 'must be a postgres:// URL, e.g. postgres://host@db.example.com:5432/host' })
    .refine((u) => !URL.canParse(u) || new URL(u).password === '', {
      message:
        'must not hold a password (any process of the same user can read the environment): write it to a file and set HOST_DATABASE_PASSWORD_FILE',
    })
    .optional(),
  databasePasswordFile: z.string().min(1, { message: 'must not be empty' }).optional(),
  keyFile: z.string().min(1, { message: 'must not be empty' }).optional(),
  replicaName: z
    .string()
    .regex(/^[A-Za-z0-9._-]{1,64}$/, { message: 'must be 1 to 64 letters, digits, dots, dashes or underscores' })
    .optional(),
  pluginIsolation: z.enum(['auto', 'sandbox', 'own-user', 'same-user'], {
    message: 'must be "auto", "sandbox", "own-user" or "same-user"',
  }),
  pluginUidRange: z.string().refine((v) => parseUidRange(v) !== undefined, {
    message: 'must be two uids FIRST-LAST, from 1000 up, the first not above the last, e.g. 200000-265535',
  }),
  pluginNetwork: z.enum(['none', 'loopback', 'any'], { message: 'must be "none", "loopback" or "any"' }),
  pluginMemoryMb: wholeNumber(0, 1024 * 1024),
  pluginMaxProcesses: wholeNumber(0, 1_000_000),
  pluginMaxOpenFiles: wholeNumber(0, 1_048_576),
  pluginCpuSeconds: wholeNumber(0, 100_000_000),
  metricsBind: z
    .string()
    .refine((v) => v === 'off' || (METRICS_BIND.test(v) && Number(METRICS_BIND.exec(v)![2]) <= 65535), {
      message: 'must be "off" or ADDRESS:PORT, e.g. 127.0.0.1:9464 or [::1]:9464 (leave it unset for /metrics on the main listener)',
    })
    .optional(),
  logFormat: z.enum(['text', 'json'], { message: 'must be "text" or "json"' }),
});
export type HostConfig = z.infer<typeof HostConfigSchema>;

/** Each setting: its environment variable and command-line flag. */
const SOURCES = {
  bind: { env: 'HOST_BIND', flag: '--bind' },
  port: { env: 'HOST_PORT', flag: '--port' },
  dataDir: { env: 'HOST_DATA_DIR', flag: '--data-dir' },
  adminTokenFile: { env: 'HOST_ADMIN_TOKEN_FILE', flag: undefined },
  maxUploadBytes: { env: 'HOST_MAX_UPLOAD_BYTES', flag: '--max-upload-bytes' },
  maxWaitingEvents: { env: 'HOST_MAX_WAITING_EVENTS', flag: '--max-waiting-events' },
  store: { env: 'HOST_STORE', flag: '--store' },
  databaseUrl: { env: 'HOST_DATABASE_URL', flag: '--database-url' },
  databasePasswordFile: { env: 'HOST_DATABASE_PASSWORD_FILE', flag: '--database-password-file' },
  keyFile: { env: 'HOST_KEY_FILE', flag: '--key-file' },
  replicaName: { env: 'HOST_REPLICA_NAME', flag: '--replica-name' },
  httpAllowLoopback: { env: 'HOST_HTTP_ALLOW_LOOPBACK', flag: '--http-allow-loopback' },
  httpAllowPrivate: { env: 'HOST_HTTP_ALLOW_PRIVATE', flag: '--http-allow-private' },
  qqbotAccountsFile: { env: 'HOST_QQBOT_ACCOUNTS_FILE', flag: '--qqbot-accounts-file' },
  publicUrl: { env: 'HOST_PUBLIC_URL', flag: '--public-url' },
  pluginIsolation: { env: 'HOST_PLUGIN_ISOLATION', flag: '--plugin-isolation' },
  pluginUidRange: { env: 'HOST_PLUGIN_UID_RANGE', flag: '--plugin-uid-range' },
  pluginNetwork: { env: 'HOST_PLUGIN_NETWORK', flag: '--plugin-network' },
  pluginMemoryMb: { env: 'HOST_PLUGIN_MEMORY_MB', flag: '--plugin-memory-mb' },
  pluginMaxProcesses: { env: 'HOST_PLUGIN_MAX_PROCESSES', flag: '--plugin-max-processes' },
  pluginMaxOpenFiles: { env: 'HOST_PLUGIN_MAX_OPEN_FILES', flag: '--plugin-max-open-files' },
  pluginCpuSeconds: { env: 'HOST_PLUGIN_CPU_SECONDS', flag: '--plugin-cpu-seconds' },
  metricsBind: { env: 'HOST_METRICS_BIND', flag: '--metrics-bind' },
  logFormat: { env: 'HOST_LOG_FORMAT', flag: '--log-format' },
} as const;

/** Where /metrics is served: on the main listener behind the admin token, on an address of its own, or nowhere. */
export type MetricsListen = { kind: 'admin' } | { kind: 'off' } | { kind: 'bind'; host: string; port: number };

/** The metrics endpoint the configuration asks for (docs/operator/metrics.md). */
export function metricsListenOf(config: HostConfig): MetricsListen {
  if (config.metricsBind === undefined) return { kind: 'admin' };
  if (config.metricsBind === 'off') return { kind: 'off' };
  const [, host, port] = METRICS_BIND.exec(config.metricsBind)!;
  return { kind: 'bind', host: host!.replace(/^\[|\]$/g, ''), port: Number(port) };
}

/** The isolation of stdio plugins the configuration asks for (docs/operator/security.md, "Isolation modes"). */
export function isolationOf(config: HostConfig): IsolationSettings {
  return {
    request: config.pluginIsolation,
    uidRange: parseUidRange(config.pluginUidRange)!,
    network: config.pluginNetwork,
    limits: {
      memoryBytes: config.pluginMemoryMb * 1024 * 1024,
      processes: config.pluginMaxProcesses,
      openFiles: config.pluginMaxOpenFiles,
      cpuSeconds: config.pluginCpuSeconds,
    },
  };
}

/** A command line is readable by every process of the machine (/proc/<pid>/cmdline), plugins included. */
export const ADMIN_TOKEN_FLAG_REFUSED =
  "--admin-token-file is not accepted: every process on the machine, plugins included, can read the host's command line and so learn where the token is. " +
  'Set HOST_ADMIN_TOKEN_FILE in the environment instead (see docs/operator/security.md).';

export const USAGE = `Usage: host [options]

Options (each also set by an environment variable; flags win):
  --bind <address>            HOST_BIND              address to listen on (default ${DEFAULT_CONFIG.bind})
  --port <port>               HOST_PORT              port, 0 for any free one (default ${DEFAULT_CONFIG.port})
  --data-dir <dir>            HOST_DATA_DIR          data directory (default ${DEFAULT_CONFIG.dataDir})
  --max-upload-bytes <n>      HOST_MAX_UPLOAD_BYTES  largest plugin upload (default ${DEFAULT_CONFIG.maxUploadBytes}, ${DEFAULT_CONFIG.maxUploadBytes / 1024 / 1024} MiB)
  --max-waiting-events <n>    HOST_MAX_WAITING_EVENTS  deliveries that may wait for plugins host-wide before new events are
                              refused before they are accepted (default ${DEFAULT_CONFIG.maxWaitingEvents})
  --store <kind>              HOST_STORE             where the registry, settings, pending updates and the event log live: sql (default,
                              a database: embedded in the data directory, or the PostgreSQL server of --database-url)
                              or file (files in the data directory); see docs/operator/storage.md
  --database-url <url>        HOST_DATABASE_URL      PostgreSQL server of the sql store, without a password (implies --store sql)
  --database-password-file <f>  HOST_DATABASE_PASSWORD_FILE  file holding that server's password
  --key-file <file>           HOST_KEY_FILE          key sealing secrets in the sql store (default <data>/state/host.key, made on
                              first start); every host sharing a database needs the same one
  --replica-name <name>       HOST_REPLICA_NAME      this host's name among those sharing a database (default: its host name)
  (environment only)           HOST_ADMIN_TOKEN_FILE  file holding the admin token (default: generated on first start, printed once)
  --http-allow-loopback <b>   HOST_HTTP_ALLOW_LOOPBACK  whether HTTP plugins may be on loopback addresses: true or false
                              (default true when --bind is a loopback address, false otherwise)
  --http-allow-private <b>    HOST_HTTP_ALLOW_PRIVATE   whether HTTP plugins may be on private addresses (10/8, 172.16/12,
                              192.168/16, 100.64/10, fc00::/7): true or false (default false)
  --qqbot-accounts-file <f>   HOST_QQBOT_ACCOUNTS_FILE  JSON file of QQ Bot accounts to connect (default: none; see
                              docs/operator/qqbot.md); accounts can also be added with POST /api/qqbot/accounts
  --public-url <url>          HOST_PUBLIC_URL        the address the QQ Bot platform reaches this host at, for the webhook
                              URLs the admin API shows (default: the address of each admin request)
  --plugin-isolation <mode>   HOST_PLUGIN_ISOLATION  how stdio plugins run: auto (default: the strongest this machine
                              allows), sandbox, own-user or same-user; see docs/operator/security.md
  --plugin-uid-range <a-b>    HOST_PLUGIN_UID_RANGE  uids given to plugins, one each (default ${DEFAULT_CONFIG.pluginUidRange})
  --plugin-network <access>   HOST_PLUGIN_NETWORK    the most network a sandboxed plugin may get: none, loopback or any (default any)
  --plugin-memory-mb <n>      HOST_PLUGIN_MEMORY_MB  memory per plugin (default ${DEFAULT_CONFIG.pluginMemoryMb}; 0: unlimited)
  --plugin-max-processes <n>  HOST_PLUGIN_MAX_PROCESSES  processes and threads per plugin (default ${DEFAULT_CONFIG.pluginMaxProcesses}; 0: unlimited)
  --plugin-max-open-files <n> HOST_PLUGIN_MAX_OPEN_FILES  open files per plugin process (default ${DEFAULT_CONFIG.pluginMaxOpenFiles}; 0: unlimited)
  --plugin-cpu-seconds <n>    HOST_PLUGIN_CPU_SECONDS  CPU time per plugin process (default 0: unlimited)
  --metrics-bind <addr:port>  HOST_METRICS_BIND      Prometheus metrics: unset (default) for /metrics on the main listener
                              behind the admin token; ADDRESS:PORT for /metrics there without a token (a private
                              interface only); off for none. See docs/operator/metrics.md
  --log-format <format>       HOST_LOG_FORMAT        the host's log lines: text (default) or json (one JSON object a line:
                              time, level, component, pluginId, eventId, message)
  --reset-admin-token         HOST_RESET_ADMIN_TOKEN  generate and print a new admin token (the old one stops working);
                              the variable takes true or false
  --help                      show this help
`;

/**
 * A token in the host's environment is readable by every process of the same
 * user (/proc/<pid>/environ), plugins included, and Node cannot take it out.
 */
export const ADMIN_TOKEN_ENV_REFUSED =
  "HOST_ADMIN_TOKEN is not accepted: any process running as the host's user, plugins included, can read the host's environment. " +
  "Write the token to a file only the host's user can read and set HOST_ADMIN_TOKEN_FILE instead, then unset HOST_ADMIN_TOKEN (see docs/operator/security.md).";

/**
 * Which addresses the host calls HTTP plugins at. Loopback and private ranges
 * only when the operator allowed them, except that a host listening on
 * loopback only allows loopback plugins by default: nobody beyond this
 * machine reaches its admin API.
 */
export function addressPolicyOf(config: HostConfig): AddressPolicy {
  const bind = config.bind.replace(/^\[|\]$/g, '');
  const loopbackBind = bind === 'localhost' || (isIP(bind) !== 0 && classifyAddress(bind) === 'loopback');
  return {
    allowLoopback: config.httpAllowLoopback === undefined ? loopbackBind : config.httpAllowLoopback === 'true',
    allowPrivate: config.httpAllowPrivate === 'true',
  };
}

export type ConfigResult = { ok: true; config: HostConfig } | { ok: false; errors: string[] } | { ok: 'help' };

/**
 * Reads the configuration from defaults, the environment and the command
 * line, in that order of precedence (last wins). Every problem is reported at
 * once, naming the variable or flag and what it must be.
 */
export function parseConfig(argv: readonly string[], env: Readonly<Record<string, string | undefined>>): ConfigResult {
  const raw: Record<string, unknown> = { ...DEFAULT_CONFIG, resetAdminToken: false };
  const origin: Record<string, string> = {};
  const errors: string[] = [];
  if (env['HOST_ADMIN_TOKEN'] !== undefined && env['HOST_ADMIN_TOKEN'] !== '') errors.push(ADMIN_TOKEN_ENV_REFUSED);
  if (argv.some((a) => a === '--admin-token-file' || a.startsWith('--admin-token-file='))) errors.push(ADMIN_TOKEN_FLAG_REFUSED);
  for (const [key, src] of Object.entries(SOURCES)) {
    const v = env[src.env];
    if (v !== undefined && v !== '') {
      raw[key] = v;
      origin[key] = src.env;
    }
  }
  // The one flag without a value has a variable too, for `npm start`, which keeps flags before `--` for itself.
  const reset = env['HOST_RESET_ADMIN_TOKEN'];
  if (reset === 'true') raw['resetAdminToken'] = true;
  else if (reset !== undefined && reset !== '' && reset !== 'false')
    errors.push(`HOST_RESET_ADMIN_TOKEN must be true or false (got ${JSON.stringify(reset)})`);
  const byFlag = new Map<string, string>(
    Object.entries(SOURCES).flatMap(([k, s]) => (s.flag ? [[s.flag.slice(2), k] as [string, string]] : [])),
  );
  const options = Object.fromEntries([
    ...[...byFlag.keys()].map((name) => [name, { type: 'string' }] as const),
    ['reset-admin-token', { type: 'boolean' }] as const,
    ['help', { type: 'boolean', short: 'h' }] as const,
  ]);
  // Not strict, so every problem is collected with this host's own message.
  // After a problem that consumed the wrong word (a flag taken as a value,
  // "--"), parsing resumes at the next word, as an operator reads the line.
  let from = 0;
  parse: while (from < argv.length) {
    const { tokens } = parseArgs({ args: argv.slice(from), options, strict: false, allowPositionals: true, tokens: true });
    let lastIndex = -1;
    for (const token of tokens) {
      const arg = argv[from + token.index] as string;
      const unknown = () => {
        // `-xy` is one token per letter, all at the same index: one error.
        if (token.index !== lastIndex) errors.push(`unknown option "${arg}" (see --help)`);
        lastIndex = token.index;
      };
      if (token.kind === 'option-terminator') {
        unknown();
        from += token.index + 1;
        continue parse;
      }
      if (token.kind === 'positional') {
        unknown();
        continue;
      }
      if ((token.name === 'help' || token.name === 'reset-admin-token') && !token.inlineValue) {
        if (token.name === 'help') return { ok: 'help' };
        raw['resetAdminToken'] = true;
        continue;
      }
      const key = token.rawName.startsWith('--') ? byFlag.get(token.name) : undefined;
      if (!key) {
        unknown();
        continue;
      }
      if (token.value === undefined || (!token.inlineValue && token.value.startsWith('--'))) {
        errors.push(`${token.rawName} needs a value`);
        if (token.value !== undefined) {
          from += token.index + 1;
          continue parse;
        }
        continue;
      }
      raw[key] = token.value;
      origin[key] = token.rawName;
    }
    break;
  }
  const parsed = HostConfigSchema.safeParse(raw);
  if (!parsed.success) {
    for (const issue of parsed.error.issues) {
      const key = String(issue.path[0]);
      const src = SOURCES[key as keyof typeof SOURCES];
      const where = origin[key] ?? (src ? `${src.env}${src.flag ? ` / ${src.flag}` : ''}` : key);
      // A password in a database URL is never repeated.
      const got = key === 'databaseUrl' ? String(raw[key]).replace(/\/\/([^:@/]*):[^@/]*@/, '//$1:***@') : raw[key];
      errors.push(`${where} ${issue.message} (got ${JSON.stringify(got)})`);
    }
  }
  if (parsed.success && parsed.data.databaseUrl !== undefined) {
    // A database URL means the SQL store unless the store was chosen explicitly, and then it must be that one.
    if (origin['store'] === undefined) parsed.data.store = 'sql';
    else if (parsed.data.store !== 'sql')
      errors.push(`${origin['store']} is "${parsed.data.store}", but HOST_DATABASE_URL is set: a database URL needs the sql store`);
  }
  if (parsed.success && parsed.data.databasePasswordFile !== undefined && parsed.data.databaseUrl === undefined) {
    errors.push(`${origin['databasePasswordFile']} is set without HOST_DATABASE_URL / --database-url`);
  }
  if (errors.length || !parsed.success) return { ok: false, errors };
  return { ok: true, config: parsed.data };
}

/**
 * Reads the admin token from its file: the whole content without a trailing
 * line break. Returns the reason when it cannot be used; the token itself is
 * never part of a message.
 */
export function readAdminTokenFile(file: string): { ok: true; token: string; warning?: string } | { ok: false; error: string } {
  let content: string;
  let mode: number;
  try {
    content = readFileSync(file, 'utf8');
    mode = statSync(file).mode;
  } catch (e) {
    return { ok: false, error: `admin token file ${file} cannot be read (${(e as NodeJS.ErrnoException).code ?? String(e)})` };
  }
  const token = content.replace(/\r?\n$/, '');
  if (token.length < MIN_ADMIN_TOKEN_LENGTH || /\s/.test(token)) {
    return {
      ok: false,
      error: `admin token file ${file} must hold one token of at least ${MIN_ADMIN_TOKEN_LENGTH} characters without spaces or line breaks`,
    };
  }
  const warning =
    process.platform !== 'win32' && (mode & 0o077) !== 0
      ? `admin token file ${file} can be read by other users (mode ${(mode & 0o777).toString(8)}); chmod 600 it`
      : undefined;
  return warning ? { ok: true, token, warning } : { ok: true, token };
}
