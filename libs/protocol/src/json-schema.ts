import { z } from 'zod';
import { ConformanceChecksFileSchema, ConformanceScenarioSchema } from './conformance';
import { ChatEventSchema, EventAckSchema, MessageEventSchema } from './event';
import { MessageResponseSchema } from './http';
import { HttpCapabilitiesSchema, HttpManifestSchema, VALID_HTTP_CAPABILITY_VALUES } from './http-manifest';
import { STDIO_TRANSPORT, StdioManifestSchema, StdioTransportSchema } from './manifest';
import { OutgoingMessageSchema } from './message';
import { METHOD_LIST } from './methods';
import { PermissionListSchema } from './permissions';

/** Base URI of the published schemas; `$id`s are relative to it. */
export const SCHEMA_BASE_URI = 'https://schemas.host.dev/plugin/v2/';

type JsonObject = Record<string, unknown>;

/**
 * Where the JSON Schema is stricter than the zod schema it comes from.
 *
 * A few zod schemas accept more than the protocol allows so that the manifest
 * check can report a specific code instead of a generic type error (a wrong
 * `transport.type` is `manifest.transport.unsupported` and points HTTP plugins
 * to "Register HTTP plugin"). Editors and the other languages' generators only
 * see the JSON Schema, so it states the real rule. Each entry is keyed by the
 * zod schema object itself (not a JSON path), so it follows that schema
 * wherever it is used. A JSON Schema can never accept something the manifest
 * check refuses for a reason it can express; the vectors test checks both
 * directions (see vectors/README.md, `jsonSchema`).
 */
const JSON_SCHEMA_TIGHTENINGS = new Map<z.core.$ZodType, (json: JsonObject) => void>([
  [
    StdioTransportSchema,
    (json) => {
      const props = json['properties'] as Record<string, JsonObject>;
      props['type'] = { ...props['type'], const: STDIO_TRANSPORT };
      json['required'] = ['type', 'stdio'];
    },
  ],
  [PermissionListSchema, (json) => void (json['uniqueItems'] = true)],
  [HttpCapabilitiesSchema, (json) => void (json['enum'] = [...VALID_HTTP_CAPABILITY_VALUES])],
]);

function toJsonSchema(schema: z.ZodType): JsonObject {
  return strip(
    z.toJSONSchema(schema, {
      target: 'draft-2020-12',
      io: 'input',
      unrepresentable: 'any',
      override: (ctx) => JSON_SCHEMA_TIGHTENINGS.get(ctx.zodSchema)?.(ctx.jsonSchema as JsonObject),
    }),
  );
}

/**
 * A file's own type is its root, not a `$ref` to one of its `$defs`: zod
 * emits the reference when the root schema has an id (MessageEvent), which
 * editors and generators read less well. Other named types stay in `$defs`.
 */
function inlineRoot(json: JsonObject): JsonObject {
  const ref = json['$ref'];
  const defs = json['$defs'] as Record<string, JsonObject> | undefined;
  if (typeof ref !== 'string' || !defs || !ref.startsWith('#/$defs/')) return json;
  const name = ref.slice('#/$defs/'.length);
  const { [name]: root, ...rest } = defs;
  const { $ref: _ref, $defs: _defs, ...top } = json;
  // A root that refers to itself (none today) keeps its definition.
  if (!root || JSON.stringify(rest).includes(`"${ref}"`) || JSON.stringify(root).includes(`"${ref}"`)) return json;
  return { ...top, ...root, ...(Object.keys(rest).length > 0 ? { $defs: rest } : {}) };
}

/**
 * Named types (`.meta({ id })` on the zod schema: UserRef, Conversation,
 * Target, PluginError, ...) become `$defs` entries, so a code generator emits
 * one type for each. In methods.json the definitions of all methods are
 * hoisted to the file's root `$defs`, where every `#/$defs/...` resolves.
 */
function hoistDefs(schema: JsonObject, into: Record<string, unknown>): JsonObject {
  const { $defs, $schema: _schema, ...rest } = schema;
  for (const [name, def] of Object.entries(($defs ?? {}) as Record<string, unknown>)) {
    if (name in into && JSON.stringify(into[name]) !== JSON.stringify(def)) {
      throw new Error(`two different schemas are named ${name}; give one of them another id`);
    }
    into[name] = def;
  }
  return rest;
}

/**
 * The JSON Schema files generated from the zod schemas, by file name. They are
 * committed under libs/protocol/schema/ and consumed by editors (`$schema` in
 * manifest.json) and by the Python, Go and C# SDK generators. Inputs are
 * described as their sender may write them (`io: "input"`): a field with a
 * default may be left out, and the receiver applies the default. That is what
 * a receiver in any language must accept, for params and results alike.
 */
export function buildJsonSchemas(): Record<string, object> {
  const one = (file: string, title: string, schema: z.ZodType, description: string) => ({
    [file]: {
      $id: SCHEMA_BASE_URI + file,
      title,
      description,
      ...inlineRoot(toJsonSchema(schema)),
    },
  });
  const methods: Record<string, unknown> = {};
  const defs: Record<string, unknown> = {};
  for (const m of METHOD_LIST) {
    methods[m.method] = {
      direction: m.direction,
      summary: m.summary,
      ...(m.permission ? { permission: m.permission } : {}),
      params: hoistDefs(toJsonSchema(m.params), defs),
      result: hoistDefs(toJsonSchema(m.result), defs),
    };
  }
  return {
    ...one(
      'manifest.schema.json',
      'Plugin manifest (stdio package)',
      StdioManifestSchema,
      'manifest.json at the root of a protocol v2 stdio plugin package.',
    ),
    ...one(
      'http-manifest.schema.json',
      'ModernPluginManifest (HTTP plugin)',
      HttpManifestSchema,
      'Body of GET {baseUrl}/host/plugin/manifest.',
    ),
    ...one(
      'message-event.schema.json',
      'Message event',
      MessageEventSchema,
      'params of events.message (stdio) and body of POST /host/plugin/events/message (HTTP).',
    ),
    ...one(
      'chat-event.schema.json',
      'Chat event',
      ChatEventSchema,
      'params of events.deliver (stdio) and body of POST /host/plugin/events/deliver (HTTP): the event types other than message.created.',
    ),
    ...one('event-ack.schema.json', 'Event ACK', EventAckSchema, 'Result of events.message and events.deliver.'),
    ...one(
      'message-response.schema.json',
      'ModernPluginMessageResponse',
      MessageResponseSchema,
      'Body an HTTP plugin returns for a message event.',
    ),
    ...one('outgoing-message.schema.json', 'Outgoing message', OutgoingMessageSchema, 'A message a plugin asks the host to send.'),
    ...one(
      'conformance-scenario.schema.json',
      'Conformance scenario',
      ConformanceScenarioSchema,
      'One scenario of the plugin conformance suite (libs/protocol/conformance/*.json): what the host sends, what it expects back.',
    ),
    ...one(
      'conformance-checks.schema.json',
      'Conformance checks',
      ConformanceChecksFileSchema,
      'The checks of the plugin conformance suite (libs/protocol/conformance/checks.json).',
    ),
    'methods.json': {
      $id: SCHEMA_BASE_URI + 'methods.json',
      title: 'Protocol v2 JSON-RPC methods',
      description: `Every stdio JSON-RPC method with its direction, permission and params/result schemas. Its format is described by ${METHODS_FILE_SCHEMA}.`,
      methods,
      $defs: Object.fromEntries(Object.entries(defs).sort(([a], [b]) => (a < b ? -1 : 1))),
    },
    [METHODS_FILE_SCHEMA]: methodsFileSchema(),
  };
}

/** The schema of methods.json itself. */
export const METHODS_FILE_SCHEMA = 'methods-file.schema.json';

/**
 * The format of methods.json, for the generators that read it: every method
 * the protocol defines (and no other) with its direction and permission
 * fixed, and params and result as JSON Schemas whose `#/$defs/...` references
 * resolve against the file's root `$defs`.
 */
function methodsFileSchema(): JsonObject {
  const method = (m: (typeof METHOD_LIST)[number]) => ({
    type: 'object',
    properties: {
      direction: { const: m.direction, description: 'hostToPlugin: the host sends the request; pluginToHost: the plugin does.' },
      summary: { type: 'string', minLength: 1 },
      ...(m.permission ? { permission: { const: m.permission, description: 'The manifest permission the method needs.' } } : {}),
      params: { $ref: '#/$defs/Schema' },
      result: { $ref: '#/$defs/Schema' },
    },
    required: ['direction', 'summary', ...(m.permission ? ['permission'] : []), 'params', 'result'],
    additionalProperties: false,
  });
  return {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    $id: SCHEMA_BASE_URI + METHODS_FILE_SCHEMA,
    title: 'Format of methods.json',
    description:
      'methods.json lists every protocol v2 JSON-RPC method: its direction, the permission it needs, and its params and result as JSON Schemas. The $defs at the root of methods.json hold the named types those schemas refer to.',
    type: 'object',
    properties: {
      $id: { const: SCHEMA_BASE_URI + 'methods.json' },
      title: { type: 'string' },
      description: { type: 'string' },
      methods: {
        type: 'object',
        properties: Object.fromEntries(METHOD_LIST.map((m) => [m.method, method(m)])),
        required: METHOD_LIST.map((m) => m.method),
        additionalProperties: false,
      },
      $defs: { type: 'object', additionalProperties: { $ref: '#/$defs/Schema' } },
    },
    required: ['$id', 'title', 'description', 'methods', '$defs'],
    additionalProperties: false,
    $defs: {
      Schema: { description: 'A JSON Schema (2020-12) object.', type: 'object' },
    },
  };
}

function strip(schema: object): JsonObject {
  const { $schema: _ignored, ...rest } = schema as Record<string, unknown>;
  return { $schema: 'https://json-schema.org/draft/2020-12/schema', ...rest };
}

/** Serialises a schema file exactly as it is committed. */
export function serializeSchema(schema: object): string {
  return JSON.stringify(schema, null, 2) + '\n';
}
