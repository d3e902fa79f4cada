import * as protocol from '../src/index';
import { z } from 'zod';
import {
  Capability,
  ERROR_FAMILIES,
  METHOD_LIST,
  PERMISSION_NAMES,
  PERMISSIONS,
  RPC_ERROR_HELP,
  RpcErrorCode,
  SDK_SHARED_ERRORS,
  PACK_ERRORS,
  SemVer,
  errorTable,
  errorTables,
  markdownTable,
  type ErrorInfo,
} from '../src/index';

export { applyBlocks } from '../src/index';

/**
 * The tables of docs/protocol/v2.md that restate code: field tables from the
 * generated JSON Schema, the method list, permissions, capabilities, limits
 * and every error code. They sit between `<!-- BEGIN GENERATED name -->` and
 * `<!-- END GENERATED name -->` markers, are rewritten by
 * `npx nx run protocol:docs`, and a test fails when they are stale, so the
 * spec cannot drift from the schemas. The prose around them is written by hand.
 */

type Json = Record<string, unknown>;

export interface DocSources {
  /** `buildJsonSchemas()`. */
  schemas: Record<string, object>;
  /** Text of src/limits.ts and src/capabilities.ts: their JSDoc explains each value. */
  limitsSource: string;
  capabilitiesSource: string;
}

const code = (s: string): string => '`' + s + '`';

const table = markdownTable;

// ---- field tables from JSON Schema ----

const PERMISSION_ENUM = JSON.stringify([...PERMISSION_NAMES]);
/** Patterns too long to read, by what they mean. */
const NAMED_PATTERNS: Record<string, string> = {
  [(z.toJSONSchema(SemVer) as Json)['pattern'] as string]: 'a semantic version such as `1.0.0` or `2.1.0-beta.1`',
};

function typeOf(s: Json): string {
  if (typeof s['$ref'] === 'string') return (s['$ref'] as string).split('/').pop() as string;
  if (s['const'] !== undefined) return code(JSON.stringify(s['const']));
  if (Array.isArray(s['enum'])) {
    if (JSON.stringify(s['enum']) === PERMISSION_ENUM) return 'permission name';
    return (s['enum'] as unknown[]).map((v) => code(JSON.stringify(v))).join(' or ');
  }
  if (Array.isArray(s['anyOf'])) return (s['anyOf'] as Json[]).map(typeOf).join(' or ');
  if (Array.isArray(s['type'])) return (s['type'] as string[]).join(' or ');
  switch (s['type']) {
    case 'array': {
      const item = typeOf((s['items'] ?? {}) as Json);
      return item.includes(' or ') ? `(${item})[]` : `${item}[]`;
    }
    case 'object': {
      const extra = s['additionalProperties'];
      if (extra && typeof extra === 'object' && Object.keys(extra).length > 0 && !s['properties']) return `map of ${typeOf(extra as Json)}`;
      return 'object';
    }
    case undefined:
      return 'any JSON';
    default:
      return s['type'] as string;
  }
}

function rulesOf(s: Json): string[] {
  const out: string[] = [];
  // Bounds that only restate "a safe integer" say nothing to a reader.
  const bound = (v: unknown) => (typeof v === 'number' && Math.abs(v) < Number.MAX_SAFE_INTEGER ? v : undefined);
  const range = (lo: unknown, hi: unknown, unit: string, units: string) => {
    const [a, b] = [bound(lo), bound(hi)];
    if (a === 1 && b === undefined && unit) out.push(units === ' characters' ? 'not empty' : 'at least 1 item');
    else if (a !== undefined && b !== undefined) out.push(`${a} to ${b}${units}`);
    else if (a !== undefined) out.push(`at least ${a}${a === 1 ? unit : units}`);
    else if (b !== undefined) out.push(`at most ${b}${b === 1 ? unit : units}`);
  };
  range(s['minLength'], s['maxLength'], ' character', ' characters');
  if (!Array.isArray(s['enum'])) range(s['minimum'], s['maximum'], '', '');
  range(s['minItems'], s['maxItems'], ' item', ' items');
  if (s['uniqueItems']) out.push('no duplicates');
  if (typeof s['pattern'] === 'string' && s['format'] === undefined) {
    const p = s['pattern'] as string;
    out.push(NAMED_PATTERNS[p] ?? `matches ${code(p)}`);
  }
  if (s['format'] === 'date-time') out.push('ISO 8601 date-time with a zone');
  const names = s['propertyNames'] as Json | undefined;
  if (names && typeof names['pattern'] === 'string') out.push(`keys match ${code(names['pattern'] as string)}`);
  if (s['type'] === 'array') out.push(...rulesOf((s['items'] ?? {}) as Json).map((r) => `each ${r}`));
  return out;
}

/** The object schema a field's children come from, and the path suffix they hang under. */
function childrenOf(s: Json): { schema: Json; suffix: string } | null {
  if (s['type'] === 'object' && s['properties']) return { schema: s, suffix: '' };
  if (s['type'] === 'array') {
    const items = (s['items'] ?? {}) as Json;
    if (items['type'] === 'object' && items['properties']) return { schema: items, suffix: '[]' };
  }
  if (s['type'] === 'object' && s['additionalProperties'] && typeof s['additionalProperties'] === 'object') {
    const value = s['additionalProperties'] as Json;
    if (value['type'] === 'object' && value['properties']) return { schema: value, suffix: '.<key>' };
  }
  const variants = Array.isArray(s['anyOf']) ? (s['anyOf'] as Json[]) : [];
  const objects = variants.filter((v) => v['type'] === 'object' && v['properties']);
  if (objects.length === 1 && variants.every((v) => v === objects[0] || v['type'] === 'null'))
    return { schema: objects[0] as Json, suffix: '' };
  return null;
}

function fieldRows(s: Json, prefix: string, out: string[][]): void {
  const props = (s['properties'] ?? {}) as Record<string, Json>;
  const required = new Set((s['required'] ?? []) as string[]);
  for (const [key, field] of Object.entries(props)) {
    const path = prefix ? `${prefix}.${key}` : key;
    const dflt = field['default'];
    const objectDefault = dflt !== null && typeof dflt === 'object' && !Array.isArray(dflt) && Object.keys(dflt).length > 0;
    const req = required.has(key)
      ? 'yes'
      : objectDefault
        ? 'no, each field has its default'
        : dflt !== undefined
          ? `no, default ${code(JSON.stringify(dflt))}`
          : 'no';
    const notes = [...rulesOf(field), ...(typeof field['description'] === 'string' ? [field['description'] as string] : [])];
    out.push([code(path), typeOf(field), req, notes.join('; ')]);
    const kids = childrenOf(field);
    if (kids) fieldRows(kids.schema, path + kids.suffix, out);
  }
}

/**
 * The schema with its references to named types (`$defs`) replaced by their
 * definitions, so a field table shows `sender.mentionId` rather than `UserRef`.
 * A recursive type (MessagePart) stays a name: its table is written by hand.
 */
export function inlineRefs(schema: Json, defs: Record<string, Json>): Json {
  const walk = (node: unknown, stack: string[]): unknown => {
    if (Array.isArray(node)) return node.map((n) => walk(n, stack));
    if (node === null || typeof node !== 'object') return node;
    const { $ref, $defs: _defs, ...rest } = node as Json;
    const name = typeof $ref === 'string' && $ref.startsWith('#/$defs/') ? $ref.slice('#/$defs/'.length) : undefined;
    const def = name !== undefined ? defs[name] : undefined;
    const recursive = name !== undefined && (stack.includes(name) || JSON.stringify(def).includes(`"#/$defs/${name}"`));
    const merged = def && !recursive ? { ...def, ...rest } : $ref === undefined ? rest : { $ref, ...rest };
    const next = def && !recursive ? [...stack, name as string] : stack;
    return Object.fromEntries(Object.entries(merged).map(([k, v]) => [k, walk(v, next)]));
  };
  return walk(schema, []) as Json;
}

/** A table of every field of an object schema, nested fields as dotted paths. */
export function fieldTable(schema: object): string {
  const rows: string[][] = [];
  fieldRows(schema as Json, '', rows);
  return table(['field', 'type', 'required', 'rules and meaning'], rows);
}

// ---- JSDoc of constant objects ----

/** `{ key: 'comment' }` for `/** comment *\/ key: value,` lines of `export const NAME = {`. */
export function jsDocOf(source: string, constName: string): Record<string, string> {
  const start = source.indexOf(`export const ${constName} = {`);
  if (start < 0) throw new Error(`export const ${constName} not found`);
  const body = source.slice(start, source.indexOf('\n}', start));
  const out: Record<string, string> = {};
  for (const m of body.matchAll(/\/\*\*([\s\S]*?)\*\/\s*\n\s*([A-Za-z_$][\w$]*):/g)) {
    out[m[2] as string] = (m[1] as string)
      .replace(/\n\s*\*/g, ' ')
      .replace(/\s+/g, ' ')
      .trim();
  }
  return out;
}

function humanValue(key: string, value: number): string {
  const unit = (n: number, units: [number, string][]) => {
    for (const [size, name] of units) if (n >= size && n % size === 0) return `${n / size} ${name}`;
    return '';
  };
  let human = '';
  if (/Milliseconds$/.test(key))
    human = unit(value, [
      [60_000, 'min'],
      [1000, 's'],
      [1, 'ms'],
    ]);
  else if (/Seconds$/.test(key))
    human = unit(value, [
      [60, 'min'],
      [1, 's'],
    ]);
  else if (/Bytes$/.test(key))
    human = unit(value, [
      [1024 * 1024, 'MiB'],
      [1024, 'KiB'],
      [1, 'bytes'],
    ]);
  return human && human !== `${value} bytes` && human !== `${value} ms` && human !== `${value} s` ? `${value} (${human})` : String(value);
}

function constantsTable(name: string, values: Record<string, number>, source: string): string {
  const docs = jsDocOf(source, name);
  const rows = Object.entries(values).map(([key, value]) => {
    const doc = docs[key];
    if (!doc) throw new Error(`${name}.${key} has no JSDoc comment in its source; add one (it becomes the spec's text)`);
    return [code(`${name}.${key}`), humanValue(key, value), doc];
  });
  return table(['name', 'value', 'meaning'], rows);
}

// ---- error codes ----

const GROUP_TITLES: Record<keyof typeof ERROR_FAMILIES, string> = {
  MESSAGE_ERRORS: 'Outgoing messages (`message.*`)',
  DELIVERY_ERRORS: 'Event delivery to stdio plugins (`delivery.*`)',
  MANIFEST_ERRORS: 'Manifest validation (`manifest.*`)',
  FIELD_ISSUE_ERRORS: 'Field issues of other validated documents (`<domain>.field.*`)',
  FRAMING_ERRORS: 'stdio framing (`framing.*`)',
  HTTP_DELIVERY_ERRORS: 'Delivery to HTTP plugins (`http.*`)',
  SIGNATURE_ERRORS: 'Signature checks of an HTTP plugin (`signature.*`)',
  PLUGIN_HTTP_ERRORS: 'Other answers of an HTTP plugin endpoint',
  HANDLER_ERRORS: 'Handler failures an SDK reports',
};

/** The families of ERROR_CATALOG with their titles, in the order the spec lists them. */
export function errorGroups(): [string, Record<string, ErrorInfo>][] {
  return Object.entries(ERROR_FAMILIES).map(([name, group]) => [GROUP_TITLES[name as keyof typeof ERROR_FAMILIES], group]);
}

/**
 * The generated blocks of docs/protocol/v2.md and docs/troubleshooting.md that the host's catalogue
 * (@host/host-errors, `npx nx run host-errors:docs`) writes; the protocol's generator leaves them alone.
 */
export const HOST_BLOCKS = ['host-error-catalog', 'troubleshooting:host-codes'] as const;

// ---- the blocks ----

/** Blocks whose text is a pointer instead of a table. */
const METHOD_REFERENCES: Record<string, string> = {
  'events.message params': 'The message event envelope: see [5.2 Message event](#52-message-event).',
  'events.message result': 'The ACK: see [5.3 ACK](#53-ack).',
};

function methodBlock(method: string, schemas: Json): string {
  const part = (p: 'params' | 'result') => {
    const ref = METHOD_REFERENCES[`${method} ${p}`];
    const s = schemas[p] as Json;
    const body = ref ?? (Object.keys((s['properties'] ?? {}) as Json).length ? fieldTable(s) : 'An empty object `{}`.');
    return `**${p === 'params' ? 'Params' : 'Result'}**\n\n${body}`;
  };
  return `${part('params')}\n\n${part('result')}`;
}

export function generatedBlocks(src: DocSources): Record<string, string> {
  const s = Object.fromEntries(
    Object.entries(src.schemas as Record<string, Json>).map(([name, file]) => [
      name,
      inlineRefs(file, (file['$defs'] ?? {}) as Record<string, Json>),
    ]),
  );
  const methodsFile = src.schemas['methods.json'] as { methods: Record<string, Json>; $defs: Record<string, Json> };
  const methods = Object.fromEntries(Object.entries(methodsFile.methods).map(([name, m]) => [name, inlineRefs(m, methodsFile.$defs)]));
  const blocks: Record<string, string> = {
    'manifest-fields': fieldTable(s['manifest.schema.json'] as Json),
    'http-manifest-fields': fieldTable(s['http-manifest.schema.json'] as Json),
    'event-fields': fieldTable(s['message-event.schema.json'] as Json),
    'ack-fields': fieldTable(s['event-ack.schema.json'] as Json),
    'response-fields': fieldTable(s['message-response.schema.json'] as Json),
    'outgoing-fields': fieldTable(s['outgoing-message.schema.json'] as Json),
    permissions: table(
      ['permission', 'what it allows', 'needed by'],
      PERMISSION_NAMES.map((p) => {
        const users = METHOD_LIST.filter((m) => m.permission === p).map((m) => code(m.method));
        return [
          code(p),
          PERMISSIONS[p],
          users.join(', ') || (p === 'messages.mentionEveryone' ? 'an `everyone` mention part' : 'reserved: no v2 method yet'),
        ];
      }),
    ),
    capabilities: (() => {
      const docs = jsDocOf(src.capabilitiesSource, 'Capability');
      return table(
        ['flag', 'value', 'meaning'],
        Object.entries(Capability).map(([name, value]) => [code(name), String(value), docs[name] ?? '']),
      );
    })(),
    methods: table(
      ['method', 'direction', 'permission', 'purpose'],
      METHOD_LIST.map((m) => [
        code(m.method),
        m.direction === 'hostToPlugin' ? 'host → plugin' : 'plugin → host',
        m.permission ? code(m.permission) : '-',
        m.summary,
      ]),
    ),
    'rpc-errors': table(
      ['code', 'name', 'meaning and fix'],
      Object.entries(RpcErrorCode).map(([name, value]) => [String(value), code(name), RPC_ERROR_HELP[name as keyof typeof RpcErrorCode]]),
    ),
    'error-catalog': errorTables(errorGroups()),
    'sdk-error-catalog': errorTable(SDK_SHARED_ERRORS),
    'pack-error-catalog': errorTable(PACK_ERRORS),
    limits: [
      constantsTable('LIMITS', protocol.LIMITS, src.limitsSource),
      constantsTable('RUNTIME_DEFAULTS', protocol.RUNTIME_DEFAULTS, src.limitsSource),
      constantsTable('HTTP_DEFAULTS', protocol.HTTP_DEFAULTS, src.limitsSource),
    ].join('\n\n'),
  };
  for (const [name, schemas] of Object.entries(methods)) blocks[`method:${name}`] = methodBlock(name, schemas);
  return blocks;
}
