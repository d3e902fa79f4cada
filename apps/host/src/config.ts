import { z } from 'zod';
import { DEFAULT_STORE, STORE_KINDS } from './stores';

/** Embedded defaults: a first start needs no configuration at all. */
export const DEFAULT_CONFIG = {
  bind: '127.0.0.1',
  port: 8080,
  dataDir: './data',
  maxUploadBytes: 64 * 1024 * 1024,
  store: DEFAULT_STORE,
} as const;

export const HostConfigSchema = z.object({
  bind: z.string().min(1, { message: 'must not be empty' }).regex(/^[A-Za-z0-9.:_\[\]-]+$/, { message: 'must be an IP address or host name' }),
  port: z.coerce
    .number({ message: 'must be a number' })
    .int({ message: 'must be a whole number' })
    .min(0, { message: 'must be from 0 to 65535' })
    .max(65535, { message: 'must be from 0 to 65535' }),
  dataDir: z.string().min(1, { message: 'must not be empty' }),
  adminToken: z.string().min(16, { message: 'must be at least 16 characters; use a long random value or leave it unset' }).optional(),
  maxUploadBytes: z.coerce
    .number({ message: 'must be a number of bytes' })
    .int({ message: 'must be a whole number of bytes' })
    .min(1024, { message: 'must be at least 1024 bytes' })
    .max(2 * 1024 * 1024 * 1024, { message: 'must be at most 2 GiB' }),
  resetAdminToken: z.boolean(),
  store: z.enum(STORE_KINDS, { message: `must be ${STORE_KINDS.map((k) => `"${k}"`).join(' or ')} (the only store so far; leave it unset for the default)` }),
});
export type HostConfig = z.infer<typeof HostConfigSchema>;

/** Each setting: its environment variable and command-line flag. */
const SOURCES = {
  bind: { env: 'HOST_BIND', flag: '--bind' },
  port: { env: 'HOST_PORT', flag: '--port' },
  dataDir: { env: 'HOST_DATA_DIR', flag: '--data-dir' },
  adminToken: { env: 'HOST_ADMIN_TOKEN', flag: undefined },
  maxUploadBytes: { env: 'HOST_MAX_UPLOAD_BYTES', flag: '--max-upload-bytes' },
  store: { env: 'HOST_STORE', flag: '--store' },
} as const;

export const USAGE = `Usage: host [options]

Options (each also set by an environment variable; flags win):
  --bind <address>            HOST_BIND              address to listen on (default ${DEFAULT_CONFIG.bind})
  --port <port>               HOST_PORT              port, 0 for any free one (default ${DEFAULT_CONFIG.port})
  --data-dir <dir>            HOST_DATA_DIR          data directory (default ${DEFAULT_CONFIG.dataDir})
  --max-upload-bytes <n>      HOST_MAX_UPLOAD_BYTES  largest plugin upload (default ${DEFAULT_CONFIG.maxUploadBytes}, 64 MiB)
  --store <kind>              HOST_STORE             where the registry, settings and pending updates live: file (default, in the data directory)
                              HOST_ADMIN_TOKEN       admin token (default: generated on first start, printed once)
  --reset-admin-token         generate and print a new admin token (the old one stops working)
  --help                      show this help
`;

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
  for (const [key, src] of Object.entries(SOURCES)) {
    const v = env[src.env];
    if (v !== undefined && v !== '') {
      raw[key] = v;
      origin[key] = src.env;
    }
  }
  const byFlag = new Map<string, string>(Object.entries(SOURCES).flatMap(([k, s]) => (s.flag ? [[s.flag, k] as [string, string]] : [])));
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--help' || arg === '-h') return { ok: 'help' };
    if (arg === '--reset-admin-token') {
      raw['resetAdminToken'] = true;
      continue;
    }
    const eq = arg.indexOf('=');
    const flag = eq > 0 ? arg.slice(0, eq) : arg;
    const key = byFlag.get(flag);
    if (!key) {
      errors.push(`unknown option "${arg}" (see --help)`);
      continue;
    }
    const value = eq > 0 ? arg.slice(eq + 1) : argv[++i];
    if (value === undefined || (eq < 0 && value.startsWith('--'))) {
      errors.push(`${flag} needs a value`);
      if (value !== undefined) i--;
      continue;
    }
    raw[key] = value;
    origin[key] = flag;
  }
  const parsed = HostConfigSchema.safeParse(raw);
  if (!parsed.success) {
    for (const issue of parsed.error.issues) {
      const key = String(issue.path[0]);
      const src = SOURCES[key as keyof typeof SOURCES];
      const where = origin[key] ?? (src ? `${src.env}${src.flag ? ` / ${src.flag}` : ''}` : key);
      errors.push(`${where} ${issue.message}${key === 'adminToken' ? '' : ` (got ${JSON.stringify(raw[key])})`}`);
    }
  }
  if (errors.length || !parsed.success) return { ok: false, errors };
  return { ok: true, config: parsed.data };
}
