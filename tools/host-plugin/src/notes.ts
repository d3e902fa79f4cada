import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  HTTP_DEFAULTS,
  PERMISSIONS,
  RELEASE_VERSIONS,
  RUNTIME_DEFAULTS,
  parseHttpManifest,
  parseManifestText,
  parseStdioManifest,
  type HttpManifest,
  type Permission,
  type StdioManifest,
} from '@host/protocol';
import { z } from 'zod';
import { CliError } from './errors';
import type { CliIO } from './io';
import type { PackageJson } from './project';

/** What notes.json may hold: the facts a manifest cannot know. */
export const NotesInputSchema = z.strictObject({
  hostVersions: z.string().min(1).optional(),
  transport: z.enum(['stdio', 'http']).optional(),
  node: z.string().min(1).optional(),
  changes: z.union([z.string(), z.array(z.string())]).optional(),
  permissions: z.record(z.string(), z.string().min(1)).optional(),
  commonErrors: z.array(z.strictObject({ error: z.string().min(1), fix: z.string().min(1) })).optional(),
  logs: z.string().min(1).optional(),
  http: z
    .strictObject({
      baseUrl: z.string().min(1).optional(),
      reachability: z.string().min(1).optional(),
      security: z.string().min(1).optional(),
      timeouts: z.string().min(1).optional(),
      concurrency: z.string().min(1).optional(),
      retries: z.string().min(1).optional(),
      logs: z.string().min(1).optional(),
      health: z.string().min(1).optional(),
      updates: z.string().min(1).optional(),
    })
    .optional(),
});
export type NotesInput = z.infer<typeof NotesInputSchema>;
type HttpFacts = Required<NonNullable<NotesInput['http']>>;

/** Everything the notes state; `renderNotes` turns it into Markdown. */
export interface NotesFacts {
  manifest: StdioManifest | HttpManifest;
  transport: 'stdio' | 'http';
  hostVersions: string;
  node: string;
  /** The language the plugin is written in, from its start command and project files. */
  runtime: PluginRuntime;
  changes: string[];
  permissionReasons: Record<string, string>;
  commonErrors: { error: string; fix: string }[];
  logs: string;
  http?: HttpFacts;
}

/**
 * Facts without a sensible default: asked on a terminal, otherwise required as flags or in notes.json.
 * The supported host versions have one: the host versions that run plugins of the SDK this CLI ships with,
 * from the workspace's one version source (a plugin may narrow them with --host-versions or notes.json).
 */
export const DEFAULT_HOST_VERSIONS = RELEASE_VERSIONS.hostVersions;
const REQUIRED = {
  'http.baseUrl': { flag: '--base-url', question: 'Base URL users register (https://...)' },
  'http.security': { flag: '--security', question: 'HTTPS, reverse proxy and authentication requirements' },
  'http.concurrency': { flag: '--concurrency', question: 'How many events the service handles at once, and what happens beyond that' },
  'http.logs': { flag: '--http-logs', question: 'Where the service writes its logs' },
  'http.updates': { flag: '--updates', question: 'How updates roll out, how to roll back, and availability (uptime, maintenance windows)' },
} as const;
type RequiredKey = keyof typeof REQUIRED;

/** What the notes say about the language a plugin is written in. */
export interface PluginRuntime {
  /** The SDK the plugin is built with, as its authors name it. */
  sdk: string;
  /** The runtime the machine that runs the plugin needs, in a phrase ("Node.js >=20.11"). */
  needs: string;
  /** The command the host runs, when the plugin needs an installed runtime (null for a compiled executable). */
  command: string | null;
  /** The name of the package ZIP the packer writes. */
  zip: string;
}

// The oldest runtimes the SDKs support (their READMEs): CPython 3.9 for host_sdk_v2, .NET 8 for HostSdk.
const PYTHON_COMMAND = /^python(3(\.\d+)?)?$/;

/**
 * The plugin's language, from its stdio start command (`node`, `python3`, `dotnet`, or a compiled executable
 * such as the Go packer writes) and, for an HTTP plugin, from the project's files.
 */
export function runtimeOf(manifest: StdioManifest | HttpManifest, dir: string, node: string): PluginRuntime {
  // An HTTP manifest has capabilities and no transport (loadManifest tells them apart the same way).
  const stdio = 'capabilities' in manifest ? undefined : (manifest as StdioManifest);
  const command = stdio ? stdio.transport.stdio.command : null;
  const id = manifest.pluginId;
  const has = (file: string) => existsSync(join(dir, file));
  if (command === 'node' || (command === null && has('package.json')))
    return { sdk: '@host/plugin-sdk-v2', needs: `Node.js ${node}`, command: 'node', zip: `${id}.zip` };
  if ((command !== null && PYTHON_COMMAND.test(command)) || (command === null && has('requirements.txt')))
    return { sdk: 'host_sdk_v2 (Python)', needs: 'Python 3.9 or newer', command: command ?? 'python3', zip: `${id}.zip` };
  if (command === 'dotnet') return { sdk: 'HostSdk (C#)', needs: '.NET 8 runtime or newer', command, zip: `${id}.zip` };
  if (has('go.mod')) {
    const platforms = stdio?.supportedPlatforms ?? [];
    const list = platforms.map((p) => [p.platform, ...(p.architectures ?? [])].join(' ')).join(', ');
    return {
      sdk: 'hostsdk (Go)',
      needs: `none: the package holds a compiled executable${list ? ` (${list})` : ''}; upload the ZIP built for the host's system`,
      command: null,
      zip: `${id}-<goos>-<goarch>.zip`,
    };
  }
  return { sdk: 'a protocol v2 SDK', needs: command ? `\`${command}\`` : "the service's own", command, zip: `${id}.zip` };
}

function loadManifest(dir: string): StdioManifest | HttpManifest {
  const path = join(dir, 'manifest.json');
  if (!existsSync(path)) throw new CliError('PACK_MANIFEST_MISSING', `${path} does not exist`);
  const text = parseManifestText(readFileSync(path, 'utf8'));
  if (!text.ok) throw new CliError('PACK_MANIFEST_INVALID', text.issues[0]?.message ?? 'invalid JSON');
  const isHttp = typeof text.value === 'object' && text.value !== null && 'capabilities' in text.value;
  const parsed = isHttp ? parseHttpManifest(text.value) : parseStdioManifest(text.value);
  if (!parsed.ok)
    throw new CliError(
      'PACK_MANIFEST_INVALID',
      'manifest.json has problems',
      parsed.issues.map((i) => `${i.code} ${i.path}: ${i.message}`),
    );
  return parsed.value;
}

function loadNotesJson(path: string | undefined, dir: string): NotesInput {
  const file = path ? join(dir, path) : join(dir, 'notes.json');
  if (!existsSync(file)) {
    if (path) throw new CliError('NOTES_INPUT_INVALID', `${file} does not exist`);
    return {};
  }
  let value: unknown;
  try {
    value = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    throw new CliError('NOTES_INPUT_INVALID', `${file}: ${(error as Error).message}`);
  }
  const parsed = NotesInputSchema.safeParse(value);
  if (!parsed.success)
    throw new CliError(
      'NOTES_INPUT_INVALID',
      `${file} has problems`,
      parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`),
    );
  return parsed.data;
}

export interface NotesFlags {
  notes?: string;
  http?: boolean;
  hostVersions?: string;
  node?: string;
  baseUrl?: string;
  security?: string;
  concurrency?: string;
  httpLogs?: string;
  updates?: string;
}

/** Collects the facts from manifest.json, package.json, notes.json, flags and (on a terminal) questions. */
export async function gatherFacts(dir: string, pkg: PackageJson | undefined, flags: NotesFlags, io: CliIO): Promise<NotesFacts> {
  const manifest = loadManifest(dir);
  const input = loadNotesJson(flags.notes, dir);
  const transport = flags.http || input.transport === 'http' || 'capabilities' in manifest ? 'http' : 'stdio';
  const values: Partial<Record<RequiredKey, string>> = {
    'http.baseUrl': flags.baseUrl ?? input.http?.baseUrl,
    'http.security': flags.security ?? input.http?.security,
    'http.concurrency': flags.concurrency ?? input.http?.concurrency,
    'http.logs': flags.httpLogs ?? input.http?.logs,
    'http.updates': flags.updates ?? input.http?.updates,
  };
  const needed = (Object.keys(REQUIRED) as RequiredKey[]).filter((k) => (transport === 'http' || !k.startsWith('http.')) && !values[k]);
  for (const key of needed) {
    if (io.interactive) values[key] = await io.ask(`${REQUIRED[key].question}: `);
  }
  const missing = needed.filter((k) => !values[k]);
  if (missing.length > 0) {
    throw new CliError(
      'NOTES_INPUT_MISSING',
      `${missing.length} fact${missing.length === 1 ? '' : 's'} missing`,
      missing.map((k) => `${REQUIRED[k].question}: pass ${REQUIRED[k].flag} or set "${k}" in notes.json`),
    );
  }
  const base = values['http.baseUrl'] ?? '';
  const node = flags.node ?? input.node ?? pkg?.engines?.['node'] ?? '>=20.11';
  return {
    manifest,
    transport,
    hostVersions: flags.hostVersions ?? input.hostVersions ?? DEFAULT_HOST_VERSIONS,
    node,
    runtime: runtimeOf(manifest, dir, node),
    changes: typeof input.changes === 'string' ? [input.changes] : (input.changes ?? []),
    permissionReasons: input.permissions ?? {},
    commonErrors: input.commonErrors ?? [],
    logs: input.logs ?? '',
    ...(transport === 'http'
      ? {
          http: {
            baseUrl: base,
            reachability:
              input.http?.reachability ??
              `The host must reach ${base} directly (no redirects are followed); allow the host's address through firewalls.`,
            security: values['http.security'] as string,
            timeouts:
              input.http?.timeouts ??
              `The host waits up to ${HTTP_DEFAULTS.requestTimeoutMilliseconds / 1000} s for each event (connect ${HTTP_DEFAULTS.connectTimeoutMilliseconds / 1000} s); every reply is made within that request.`,
            concurrency: values['http.concurrency'] as string,
            retries:
              input.http?.retries ??
              `The host retries a delivery up to ${HTTP_DEFAULTS.maxRetries} times (200 ms, then 800 ms) after connection failures and 502/503/504, with the same delivery id; the service answers 503 when it is over its concurrency limit, and refuses a replayed delivery id.`,
            logs: values['http.logs'] as string,
            health:
              input.http?.health ??
              `GET ${base}/host/plugin/manifest answers 200 with the manifest while the service is up; the host shows delivery health in its plugins API.`,
            updates: values['http.updates'] as string,
          },
        }
      : {}),
  };
}

function table(rows: string[][]): string {
  const [head, ...body] = rows;
  const line = (r: string[]) => `| ${r.map((c) => c.replace(/\|/g, '\\|').replace(/\n/g, ' ')).join(' | ')} |`;
  return [line(head as string[]), line((head as string[]).map(() => '---')), ...body.map(line)].join('\n');
}

/** The release notes, in Markdown: every item the delivery contract asks a publisher to state. */
export function renderNotes(f: NotesFacts): string {
  const m = f.manifest;
  const out: string[] = [`# ${m.name} ${m.version}`, ''];
  if (m.description) out.push(m.description, '');
  out.push(
    `Plugin id \`${m.pluginId}\`, by ${m.author}. Protocol version ${m.protocolVersion}${m.sdkVersion ? `, built with ${f.runtime.sdk} ${m.sdkVersion}` : ''}.`,
    '',
  );
  if (f.changes.length) out.push("## What's new", '', ...f.changes.map((c) => `- ${c}`), '');

  out.push('## Compatibility', '', `- Supported host versions: ${f.hostVersions}`);
  out.push(
    f.transport === 'stdio'
      ? f.runtime.command
        ? `- Required runtime: ${f.runtime.needs} on the host machine (the host runs \`${f.runtime.command}\`); every other dependency is inside the ZIP.`
        : `- Required runtime: ${f.runtime.needs}.`
      : `- Required runtime: ${f.runtime.needs} on the machine that runs the service (not on the host).`,
    '',
  );

  out.push('## Installation', '');
  if (f.transport === 'stdio') {
    out.push(
      '- Transport: `stdio-jsonrpc` (a local process the host starts, stops and restarts).',
      `- Install: upload \`${f.runtime.zip}\` to the host's admin API (\`POST /api/plugins/packages\`, file field \`package\`). Uploading a newer version with the same plugin id updates it; the previous version is backed up and the plugin's data and settings are kept.`,
      '',
    );
  } else {
    out.push(
      '- Transport: HTTP (a service you run; no ZIP is uploaded).',
      `- Install: register the base URL \`${f.http?.baseUrl}\` with the host ("Register HTTP plugin", \`POST /api/plugins/http\`). Configure the service with the signing secret shown once at registration.`,
      '',
    );
  }

  const commands = m.commands;
  if (commands.length) {
    out.push(
      '## Commands',
      '',
      table([
        ['Command', 'Aliases', 'Description'],
        ...commands.map((c) => [`${c.prefixes[0] ?? ''}${c.name}`, c.aliases.join(', ') || '-', c.description ?? '-']),
      ]),
      '',
    );
  }

  out.push('## Permissions', '');
  if (m.permissions.length === 0) out.push('None.', '');
  else
    out.push(
      table([
        ['Permission', 'Why this plugin needs it'],
        ...m.permissions.map((p) => [`\`${p}\``, f.permissionReasons[p] ?? PERMISSIONS[p as Permission]]),
      ]),
      '',
    );

  out.push('## Configuration', '');
  const fields = Object.entries(m.settings?.configSchema ?? {});
  if (fields.length === 0) out.push('No configuration fields.', '');
  else {
    out.push(
      table([
        ['Field', 'Type', 'Required', 'Default', 'Description'],
        ...fields.map(([key, fd]) => [
          `\`${key}\` (${fd.label})`,
          fd.type + (fd.options ? `: ${fd.options.map((o) => o.value).join(', ')}` : ''),
          fd.required ? 'yes' : 'no',
          fd.type === 'secret' ? '(secret)' : fd.defaultValue === undefined ? '-' : `\`${String(fd.defaultValue)}\``,
          fd.description ?? '-',
        ]),
      ]),
      '',
    );
  }

  out.push('## Common errors and logs', '');
  const errors =
    f.transport === 'stdio'
      ? [
          {
            error: 'The plugin does not start: "PLUGIN_COMMAND_NOT_FOUND"',
            fix: f.runtime.command
              ? `Install ${f.runtime.needs} on the host machine so \`${f.runtime.command}\` is on its PATH.`
              : "Upload the ZIP built for the host's operating system and architecture.",
          },
          {
            error: 'The plugin stops after a while ("2 missed pings")',
            fix: 'A handler blocks the process; see the plugin log for the last event.',
          },
          { error: '"message.permission.denied" in the log', fix: 'The installed manifest lacks a permission; reinstall this release.' },
          {
            error: '"message.reference.expired"',
            fix: "The reply came after the provider's reply window; nothing to do for that message.",
          },
        ]
      : [
          {
            error: 'Registration fails with REGISTRATION_UNREACHABLE or REGISTRATION_TLS_FAILED',
            fix: 'Check that the host reaches the base URL and trusts its certificate.',
          },
          {
            error: 'Deliveries fail with "http.signature_rejected"',
            fix: 'Configure the service with the signing secret shown at registration and keep its clock in sync (NTP).',
          },
          { error: 'Deliveries fail with "http.timeout"', fix: 'The service answered too slowly; see its logs and the timeouts below.' },
        ];
  out.push(table([['Error', 'What to do'], ...[...errors, ...f.commonErrors].map((e) => [e.error, e.fix])]), '');
  if (f.transport === 'stdio') {
    out.push(
      `- Logs: the plugin's stderr and log lines are kept by the host under \`<data>/logs/${m.pluginId}/\` and readable through \`GET /api/plugins/${m.pluginId}/logs\`.`,
      `- Data: the plugin keeps its files under \`<data>/plugin-data/${m.pluginId}/\`; they survive updates.`,
    );
    const c = 'transport' in m ? (m as StdioManifest).concurrency : undefined;
    out.push(
      `- Concurrency: ${c?.maxConcurrentEvents ?? RUNTIME_DEFAULTS.maxConcurrentEvents} event(s) at a time, up to ${c?.queueCapacity ?? RUNTIME_DEFAULTS.queueCapacity} waiting.`,
    );
  }
  if (f.logs) out.push(`- ${f.logs}`);
  out.push('');

  if (f.http) {
    const h = f.http;
    out.push(
      '## Operating the service',
      '',
      `- Service address: \`${h.baseUrl}\`. ${h.reachability}`,
      `- HTTPS, proxy and authentication: ${h.security} Every request from the host is signed (HMAC-SHA256 with the registration secret); the service refuses unsigned, stale and replayed requests with 401.`,
      `- Timeouts: ${h.timeouts}`,
      `- Concurrency: ${h.concurrency}`,
      `- Retries: ${h.retries}`,
      `- Logs: ${h.logs}`,
      `- Health check: ${h.health}`,
      `- Updates, rollback and availability: ${h.updates}`,
      '',
    );
  }
  return out.join('\n');
}
