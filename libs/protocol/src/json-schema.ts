import { z } from 'zod';
import { EventAckSchema, MessageEventSchema } from './event';
import { MessageResponseSchema } from './http';
import { HttpManifestSchema } from './http-manifest';
import { StdioManifestSchema } from './manifest';
import { OutgoingMessageSchema } from './message';
import { METHOD_LIST } from './methods';

/** Base URI of the published schemas; `$id`s are relative to it. */
export const SCHEMA_BASE_URI = 'https://schemas.host.dev/plugin/v2/';

/**
 * The JSON Schema files generated from the zod schemas, by file name. They are
 * committed under libs/protocol/schema/ and consumed by editors (`$schema` in
 * manifest.json) and by the Python, Go and C# SDK generators. Inputs are
 * described as authors write them (`io: "input"`: defaulted fields optional).
 */
export function buildJsonSchemas(): Record<string, object> {
  const one = (file: string, title: string, schema: z.ZodType, description: string) => ({
    [file]: {
      $id: SCHEMA_BASE_URI + file,
      title,
      description,
      ...strip(z.toJSONSchema(schema, { target: 'draft-2020-12', io: 'input', unrepresentable: 'any' })),
    },
  });
  const methods: Record<string, unknown> = {};
  for (const m of METHOD_LIST) {
    methods[m.method] = {
      direction: m.direction,
      summary: m.summary,
      ...(m.permission ? { permission: m.permission } : {}),
      params: strip(z.toJSONSchema(m.params, { target: 'draft-2020-12', io: 'input', unrepresentable: 'any' })),
      result: strip(z.toJSONSchema(m.result, { target: 'draft-2020-12', io: 'output', unrepresentable: 'any' })),
    };
  }
  return {
    ...one('manifest.schema.json', 'Plugin manifest (stdio package)', StdioManifestSchema, 'manifest.json at the root of a protocol v2 stdio plugin package.'),
    ...one('http-manifest.schema.json', 'ModernPluginManifest (HTTP plugin)', HttpManifestSchema, 'Body of GET {baseUrl}/host/plugin/manifest.'),
    ...one('message-event.schema.json', 'Message event', MessageEventSchema, 'params of events.message (stdio) and body of POST /host/plugin/events/message (HTTP).'),
    ...one('event-ack.schema.json', 'Event ACK', EventAckSchema, 'Result of events.message.'),
    ...one('message-response.schema.json', 'ModernPluginMessageResponse', MessageResponseSchema, 'Body an HTTP plugin returns for a message event.'),
    ...one('outgoing-message.schema.json', 'Outgoing message', OutgoingMessageSchema, 'A message a plugin asks the host to send.'),
    'methods.json': {
      $id: SCHEMA_BASE_URI + 'methods.json',
      title: 'Protocol v2 JSON-RPC methods',
      description: 'Every stdio JSON-RPC method with its direction, permission and params/result schemas.',
      methods,
    },
  };
}

function strip(schema: object): object {
  const { $schema: _ignored, ...rest } = schema as Record<string, unknown>;
  return { $schema: 'https://json-schema.org/draft/2020-12/schema', ...rest };
}

/** Serialises a schema file exactly as it is committed. */
export function serializeSchema(schema: object): string {
  return JSON.stringify(schema, null, 2) + '\n';
}
