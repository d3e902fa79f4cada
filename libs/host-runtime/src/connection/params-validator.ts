import { z } from 'zod';
import {
  EventAckSchema,
  EveryoneMentionPartSchema,
  Methods,
  OutgoingMessageSchema,
  ReplyParamsSchema,
  SendParamsSchema,
  TextPartSchema,
  UserMentionPartSchema,
  type MethodDescriptor,
} from '@host/protocol';

/**
 * Params validation of plugin calls, made cheap for the calls every event
 * makes. `z.compile` turns a schema into generated code that falls back to
 * zod's own parser on any failure, so results and issues stay zod's. It
 * refuses recursive schemas, and message parts are (composite parts nest), so
 * the compiled variants are the protocol's params schemas with the parts
 * narrowed to text and mention parts: a message they take is valid for the
 * protocol's schema with the same output, and any other message (a composite
 * part, an error) is parsed by the protocol's schema itself.
 */
const FlatMessageSchema = OutgoingMessageSchema.extend({
  parts: z.array(z.union([TextPartSchema, UserMentionPartSchema, EveryoneMentionPartSchema])),
});
const COMPILED = new Map<string, z.ZodType>([
  [Methods.reply.method, z.compile(ReplyParamsSchema.extend({ message: FlatMessageSchema }))],
  [Methods.send.method, z.compile(SendParamsSchema.extend({ message: FlatMessageSchema }))],
  // Every accepted event ends with one; its schema is flat, so it compiles whole.
  [Methods.completed.method, z.compile(Methods.completed.params)],
]);

/** True when params.message.parts holds a part the narrowed schemas do not take. */
function hasNestedParts(params: unknown): boolean {
  const parts = (params as { message?: { parts?: unknown } }).message?.parts;
  if (!Array.isArray(parts)) return true;
  for (const p of parts) if ((p as { type?: unknown } | null)?.type === 'composite') return true;
  return false;
}

/** `descriptor.params.safeParse(params)`, with the same result, faster for messages.reply, messages.send and events.completed. */
export function parseParams(descriptor: MethodDescriptor, params: unknown): ReturnType<z.ZodType['safeParse']> {
  const compiled = COMPILED.get(descriptor.method);
  if (
    compiled &&
    typeof params === 'object' &&
    params !== null &&
    (descriptor.method === Methods.completed.method || !hasNestedParts(params))
  ) {
    const fast = compiled.safeParse(params);
    if (fast.success) return fast;
  }
  return descriptor.params.safeParse(params);
}

const COMPILED_ACK = z.compile(EventAckSchema);

/** `EventAckSchema.safeParse(answer)`, with the same result: the answer to every events.message and events.deliver. */
export function parseEventAck(answer: unknown): ReturnType<typeof EventAckSchema.safeParse> {
  return COMPILED_ACK.safeParse(answer) as ReturnType<typeof EventAckSchema.safeParse>;
}
