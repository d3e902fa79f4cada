import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import traverse from 'json-schema-traverse';
import type { ErrorFamily, Field, Method, NamedType, ProtocolModel, SchemaDocument, TypeRef } from './model';

type Schema = { readonly [keyword: string]: unknown };

/**
 * The schema files an SDK needs and the name of each document's root type.
 * methods.json is read separately: its root is a table of methods, not a type.
 */
export const DOCUMENTS: Readonly<Record<string, string>> = {
  'manifest.schema.json': 'StdioManifest',
  'http-manifest.schema.json': 'HttpManifest',
  'message-event.schema.json': 'MessageEvent',
  'event-ack.schema.json': 'EventAck',
  'message-response.schema.json': 'MessageResponse',
  'outgoing-message.schema.json': 'OutgoingMessage',
};

/**
 * Names for inline object schemas where the derived name (parent type +
 * property, `Item` for array items) reads badly. Keyed by `<Parent>.<property>`
 * (`[]` marks the items of an array property).
 */
export const NAME_OVERRIDES: Readonly<Record<string, string>> = {
  'MessageResponse.outboundMessages[]': 'OutboundMessage',
};

/**
 * Keywords the model understands. Any other keyword in a schema fails the
 * generation, so a new schema feature is handled on purpose instead of being
 * dropped silently from every SDK. Annotations that do not change a type are
 * listed too.
 */
const KNOWN_KEYWORDS = new Set([
  '$id',
  '$schema',
  '$ref',
  '$defs',
  'title',
  'description',
  'type',
  'properties',
  'required',
  'additionalProperties',
  'propertyNames',
  'items',
  'anyOf',
  'enum',
  'const',
  'default',
  'format',
  'pattern',
  'minLength',
  'maxLength',
  'minimum',
  'maximum',
  'minItems',
  'maxItems',
  'uniqueItems',
]);

export class SchemaModelError extends Error {
  override readonly name = 'SchemaModelError';
}

const pascal = (s: string) =>
  s
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((w) => w[0]!.toUpperCase() + w.slice(1))
    .join('');

function readJson(path: string): Schema {
  return JSON.parse(readFileSync(path, 'utf8')) as Schema;
}

/** Stable, key-order-independent text of a JSON value, to compare $defs found in several files. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/**
 * Checks one schema tree with json-schema-traverse, which visits every
 * subschema under the standard keywords: every keyword is one the model
 * understands, and every `$ref` is a local `#/$defs/<Name>` that exists.
 */
function inspect(schema: Schema, file: string, defs: Readonly<Record<string, unknown>>): void {
  traverse(schema as traverse.SchemaObject, (sub, pointer) => {
    for (const keyword of Object.keys(sub)) {
      if (!KNOWN_KEYWORDS.has(keyword)) {
        throw new SchemaModelError(`${file}#${pointer}: keyword "${keyword}" is not supported by the SDK model; extend read-protocol.ts`);
      }
    }
    const ref = sub['$ref'];
    if (ref !== undefined) {
      const match = typeof ref === 'string' ? /^#\/\$defs\/([A-Za-z0-9_]+)$/.exec(ref) : null;
      if (!match || !(match[1]! in defs))
        throw new SchemaModelError(`${file}#${pointer}: $ref ${String(ref)} does not name a local $defs entry`);
    }
  });
}

/**
 * Converts schemas into named types. The conversion is hand-written rather
 * than left to a dereferencing library because it must keep what such a
 * library throws away: the name of every `$ref` (so `MessagePart` stays one
 * recursive type instead of an endlessly inlined tree) and a stable name for
 * every inline object, derived from where it sits.
 */
class TypeCollector {
  readonly types = new Map<string, NamedType>();
  private readonly defSources = new Map<string, { canonical: string; source: string }>();

  /** Registers the $defs of a file; a name defined in several files must be the same schema everywhere. */
  addDefs(file: string, defs: Readonly<Record<string, unknown>>): void {
    for (const [name, schema] of Object.entries(defs)) {
      const text = canonical(schema);
      const seen = this.defSources.get(name);
      if (seen && seen.canonical !== text) {
        throw new SchemaModelError(`$defs/${name} differs between ${seen.source} and ${file}; shared types must be identical`);
      }
      if (!seen) {
        this.defSources.set(name, { canonical: text, source: file });
        this.define(name, schema as Schema, `${file}#/$defs/${name}`);
      }
    }
  }

  /** Defines a named type from a schema (object or alias). */
  define(name: string, schema: Schema, source: string): void {
    if (this.types.has(name)) {
      const existing = this.types.get(name)!;
      if (existing.source === source) return;
      throw new SchemaModelError(`type name ${name} is used by ${existing.source} and ${source}; add a NAME_OVERRIDES entry`);
    }
    const description = typeof schema['description'] === 'string' ? (schema['description'] as string) : undefined;
    if (isObjectSchema(schema)) {
      // Reserve the name first: a recursive reference to it must not define it twice.
      this.types.set(name, { kind: 'alias', name, type: { kind: 'any' }, source });
      const fields = this.fields(name, schema, source);
      this.types.set(name, {
        kind: 'object',
        name,
        ...(description ? { description } : {}),
        fields,
        open: schema['additionalProperties'] !== false,
        source,
      });
      return;
    }
    this.types.set(name, { kind: 'alias', name, type: { kind: 'any' }, source });
    const type = this.ref(schema, name, source);
    this.types.set(name, { kind: 'alias', name, ...(description ? { description } : {}), type, source });
  }

  private fields(owner: string, schema: Schema, source: string): Field[] {
    const properties = (schema['properties'] ?? {}) as Record<string, Schema>;
    const required = new Set((schema['required'] ?? []) as string[]);
    return Object.entries(properties).map(([wireName, property]) => {
      const type = this.ref(property, `${owner}${pascal(wireName)}`, `${source}/properties/${wireName}`, `${owner}.${wireName}`);
      const description = typeof property['description'] === 'string' ? (property['description'] as string) : undefined;
      return {
        wireName,
        type,
        required: required.has(wireName),
        ...('default' in property ? { default: property['default'] } : {}),
        ...(description ? { description } : {}),
      };
    });
  }

  /**
   * The TypeRef of a schema. `suggested` names an inline object or union
   * found here; `overrideKey` looks the name up in NAME_OVERRIDES.
   */
  ref(schema: Schema, suggested: string, source: string, overrideKey?: string): TypeRef {
    const named = (name: string): TypeRef => ({ kind: 'named', name });
    if (typeof schema['$ref'] === 'string') return named((schema['$ref'] as string).slice('#/$defs/'.length));
    if ('const' in schema) {
      const value = schema['const'];
      if (typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean') {
        throw new SchemaModelError(`${source}: const ${JSON.stringify(value)} is not a string, number or boolean`);
      }
      return { kind: 'literal', value };
    }
    if (Array.isArray(schema['enum'])) {
      const values = schema['enum'] as unknown[];
      if (values.every((v) => typeof v === 'string')) return { kind: 'enum', values: values as string[] };
      if (values.every((v) => typeof v === 'number')) return { kind: 'enum', values: values as number[] };
      throw new SchemaModelError(`${source}: an enum must be all strings or all numbers`);
    }
    if (Array.isArray(schema['anyOf'])) {
      const branches = schema['anyOf'] as Schema[];
      const options = branches.map((branch, i) => {
        if (isObjectSchema(branch) && !branch['$ref']) {
          // Name an inline branch by its discriminating constants: MessagePart + Mention + User.
          const tags = Object.values((branch['properties'] ?? {}) as Record<string, Schema>)
            .map((p) => p['const'])
            .filter((v): v is string => typeof v === 'string');
          const name = `${suggested}${tags.length ? tags.map(pascal).join('') : `Option${i + 1}`}`;
          this.define(name, branch, `${source}/anyOf/${i}`);
          return named(name);
        }
        return this.ref(branch, `${suggested}Option${i + 1}`, `${source}/anyOf/${i}`);
      });
      return { kind: 'union', options };
    }
    const type = schema['type'];
    if (Array.isArray(type)) {
      // `"type": ["string", "number"]`: a union of the listed primitive types.
      return {
        kind: 'union',
        options: type.map((t, i) => this.ref({ ...schema, type: t }, `${suggested}Option${i + 1}`, source, overrideKey)),
      };
    }
    switch (type) {
      case 'string':
      case 'integer':
      case 'number':
      case 'boolean':
      case 'null':
        return { kind: type };
      case 'array': {
        const items = (schema['items'] ?? {}) as Schema;
        const itemKey = overrideKey ? `${overrideKey}[]` : undefined;
        const itemName = (itemKey && NAME_OVERRIDES[itemKey]) ?? `${suggested}Item`;
        return { kind: 'array', items: this.ref(items, itemName, `${source}/items`, itemKey) };
      }
      case 'object': {
        if (isObjectSchema(schema)) {
          const name = (overrideKey && NAME_OVERRIDES[overrideKey]) ?? suggested;
          this.define(name, schema, source);
          return named(name);
        }
        const values = schema['additionalProperties'];
        if (values && typeof values === 'object')
          return { kind: 'map', values: this.ref(values as Schema, `${suggested}Value`, `${source}/additionalProperties`) };
        return { kind: 'map', values: { kind: 'any' } };
      }
      case undefined:
        return { kind: 'any' };
      default:
        throw new SchemaModelError(`${source}: type ${JSON.stringify(type)} is not supported`);
    }
  }
}

/** An object with declared properties (a record type), as opposed to a map or a bare object. */
function isObjectSchema(schema: Schema): boolean {
  return schema['type'] === 'object' && typeof schema['properties'] === 'object' && schema['properties'] !== null;
}

function sortedBy<T>(items: readonly T[], key: (item: T) => string): T[] {
  return [...items].sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
}

/**
 * Reads libs/protocol (`schema/` and `catalog/`) into the model. Pure apart
 * from reading files; the same files always give the same model.
 */
export function readProtocol(protocolDir: string): ProtocolModel {
  const schemaDir = join(protocolDir, 'schema');
  const catalogDir = join(protocolDir, 'catalog');
  const collector = new TypeCollector();
  const documents: SchemaDocument[] = [];

  const methodsFile = readJson(join(schemaDir, 'methods.json'));
  const methodDefs = (methodsFile['$defs'] ?? {}) as Record<string, unknown>;
  collector.addDefs('methods.json', methodDefs);

  for (const [file, root] of Object.entries(DOCUMENTS)) {
    const schema = readJson(join(schemaDir, file));
    const defs = (schema['$defs'] ?? {}) as Record<string, unknown>;
    inspect(schema, file, defs);
    collector.addDefs(file, defs);
    // A document whose root is also a shared type (MessageEvent) must be that type.
    const { $id: _id, $schema: _schema, title: _title, $defs: _defs, ...body } = schema;
    const shared = methodDefs[root] as Schema | undefined;
    if (shared !== undefined) {
      const { description: _d, ...bodyRest } = body;
      const { description: _sd, ...sharedRest } = shared;
      if (canonical(bodyRest) !== canonical(sharedRest))
        throw new SchemaModelError(`${file}: its root differs from $defs/${root} of methods.json`);
    }
    if (shared === undefined) collector.define(root, body, `${file}#`);
    documents.push({ file, root, schema });
  }

  const rawMethods = (methodsFile['methods'] ?? {}) as Record<string, Schema>;
  const methods: Method[] = Object.entries(rawMethods).map(([method, entry]) => {
    const base = pascal(method);
    for (const part of ['params', 'result'] as const) inspect(entry[part] as Schema, `methods.json ${method} ${part}`, methodDefs);
    const direction = entry['direction'];
    if (direction !== 'hostToPlugin' && direction !== 'pluginToHost') throw new SchemaModelError(`methods.json ${method}: bad direction`);
    return {
      method,
      direction,
      ...(typeof entry['permission'] === 'string' ? { permission: entry['permission'] as string } : {}),
      summary: String(entry['summary'] ?? ''),
      params: collector.ref(entry['params'] as Schema, `${base}Params`, `methods.json#/methods/${method}/params`),
      result: collector.ref(entry['result'] as Schema, `${base}Result`, `methods.json#/methods/${method}/result`),
    };
  });

  const errors = readJson(join(catalogDir, 'error-codes.json'));
  const errorFamilies = (errors['families'] as ErrorFamily[]).map((f) => ({
    family: f.family,
    codes: f.codes.map((c) => ({ code: c.code, message: c.message, ...(c.status !== undefined ? { status: c.status } : {}) })),
  }));
  const sdk = readJson(join(catalogDir, 'sdk-error-codes.json'));
  const pack = readJson(join(catalogDir, 'pack-error-codes.json'));
  const rpc = readJson(join(catalogDir, 'rpc-error-codes.json'));
  const limits = readJson(join(catalogDir, 'limits.json'));
  const permissions = readJson(join(catalogDir, 'permissions.json'));
  const capabilities = readJson(join(catalogDir, 'capabilities.json'));
  const wire = readJson(join(catalogDir, 'wire.json'));
  const versions = readJson(join(catalogDir, 'versions.json'));
  const sdkVersion = versions['sdkVersion'];
  if (typeof sdkVersion !== 'string' || !/^\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?$/.test(sdkVersion))
    throw new SchemaModelError(`versions.json: sdkVersion must be a semantic version, got ${JSON.stringify(sdkVersion)}`);
  const stdio = wire['stdio'] as { flag: string; transport: string };
  const http = wire['http'] as { paths: Record<string, string>; headers: Record<string, string>; signatureVersion: string };

  return {
    protocolVersion: limits['protocolVersion'] as number,
    sdkVersion,
    types: sortedBy([...collector.types.values()], (t) => t.name),
    methods,
    documents,
    methodsSchema: methodsFile,
    errorFamilies,
    sdkErrors: (sdk['codes'] as { code: string; message: string }[]).map((c) => ({ code: c.code, message: c.message })),
    packErrors: (pack['codes'] as { code: string; message: string }[]).map((c) => ({ code: c.code, message: c.message })),
    rpcCodes: rpc['codes'] as { name: string; code: number; help: string }[],
    limits: limits['limits'] as Record<string, number>,
    runtimeDefaults: limits['runtimeDefaults'] as Record<string, number>,
    httpDefaults: limits['httpDefaults'] as Record<string, number>,
    permissions: permissions['permissions'] as { name: string; description: string; methods: string[] }[],
    capabilities: Object.entries(capabilities['flags'] as Record<string, number>).map(([name, value]) => ({ name, value })),
    wire: {
      stdioFlag: stdio.flag,
      stdioTransport: stdio.transport,
      httpPaths: http.paths,
      httpHeaders: http.headers,
      signatureVersion: http.signatureVersion,
    },
  };
}
