import { z } from 'zod';
import checksFile from '../conformance/checks.json';
import handshakeOtherPlugin from '../conformance/handshake-other-plugin.json';
import malformedHeader from '../conformance/malformed-header.json';
import malformedLength from '../conformance/malformed-length.json';
import malformedPayload from '../conformance/malformed-payload.json';
import session from '../conformance/session.json';
import stdinEof from '../conformance/stdin-eof.json';
import withoutHostStdio from '../conformance/without-host-stdio.json';
import { LIMITS, RUNTIME_DEFAULTS } from './limits';
import { RpcErrorCode, type RpcErrorName } from './rpc-errors';

/**
 * The plugin conformance suite as data (docs/protocol/v2.md, "Conformance"):
 * scripts of what a host sends to a stdio plugin and what it expects back.
 * Every time bound names a limit of the protocol (or one the plugin declares in
 * its manifest) instead of copying a number, so the suite follows the limits.
 * Any runner, in any language, can play these files; the Node runner is
 * libs/plugin-conformance.
 */

/** The limits a time bound may name: the protocol's own, or the plugin's declared ones (manifest `concurrency`). */
export const CONFORMANCE_TIME_REFS = [
  'plugin.handlerDeadlineMilliseconds',
  ...Object.keys(RUNTIME_DEFAULTS).map((k) => `RUNTIME_DEFAULTS.${k}`),
  ...Object.keys(LIMITS)
    .filter((k) => k.endsWith('Milliseconds'))
    .map((k) => `LIMITS.${k}`),
] as [string, ...string[]];

/** Checks a runner asserts over a whole run, on everything the plugin writes. */
export const CONFORMANCE_OBSERVED_CHECKS = ['stdout.frames-only', 'events.decision-first', 'events.reply-token'] as const;

/** Counts a step may name instead of a number: the plugin's own limit. */
export const CONFORMANCE_COUNT_REFS = ['plugin.maxConcurrentEvents'] as const;

const TimeRef = z
  .enum(CONFORMANCE_TIME_REFS)
  .describe('A named limit: RUNTIME_DEFAULTS.x or LIMITS.x of the protocol, or plugin.x, the plugin’s declared value.');
const CheckId = z.string().regex(/^[a-z0-9-]+(\.[a-z0-9-]+)+$/);
const RpcErrorNameSchema = z.enum(Object.keys(RpcErrorCode) as [RpcErrorName, ...RpcErrorName[]]);
const Expect = z.union([
  z
    .object({ result: z.literal(true) })
    .strict()
    .describe('A result valid for the method (its result schema).'),
  z
    .object({ error: z.union([RpcErrorNameSchema, z.literal('any')]) })
    .strict()
    .describe('An error answer with this JSON-RPC code, or any error.'),
]);
const Conversation = z.enum(['group', 'c2c']);
/** Names the check a step asserts; the step's outcome counts for that check. */
const checked = { check: CheckId };

export const ConformanceStepSchema = z.discriminatedUnion('do', [
  z
    .object({
      do: z.literal('initialize'),
      pluginId: z.enum(['own', 'other']).describe('"other" sends the handshake for a pluginId that is not the plugin’s.'),
      expect: Expect,
      within: TimeRef,
      ...checked,
    })
    .strict()
    .describe('Sends host.initialize exactly as the host builds it (folders, token, runtime limits from the manifest, settings).'),
  z
    .object({
      do: z.literal('request'),
      method: z.string().min(1),
      params: z.record(z.string(), z.unknown()),
      expect: Expect,
      within: TimeRef,
      requiresBusy: z.string().optional().describe('Skip the step unless the handlers of this deliver label are held busy.'),
      ...checked,
    })
    .strict()
    .describe('Sends a host-to-plugin request and waits for its answer.'),
  z
    .object({ do: z.literal('notify'), method: z.string().min(1), params: z.record(z.string(), z.unknown()), within: TimeRef, ...checked })
    .strict()
    .describe('Sends a notification (no id), then plugin.ping: the ping must be answered, the notification never.'),
  z
    .object({ do: z.literal('raw'), text: z.string().min(1) })
    .strict()
    .describe('Writes these bytes (UTF-8) to stdin as they are: a malformed frame.'),
  z
    .object({
      do: z.literal('deliver'),
      label: z.string().min(1),
      conversation: Conversation.describe('c2c: a one-to-one chat, whose reply target is a user.'),
      count: z.union([z.number().int().min(1), z.enum(CONFORMANCE_COUNT_REFS)]),
      hold: z
        .boolean()
        .describe('Hold the host’s answer to each event’s first messages.reply: while held, the handler provably runs (is busy).'),
      requiresBusy: z.string().optional(),
      expect: z.union([z.object({ ack: z.literal(true) }).strict(), z.object({ error: RpcErrorNameSchema }).strict()]),
      within: TimeRef,
      withinForInterceptors: TimeRef.optional().describe(
        'The bound for a plugin with messages.intercept, which decides in its handler (default: within).',
      ),
      ...checked,
    })
    .strict()
    .describe(
      'Sends events.message: for the first declared command that applies to the conversation type, else a plain message (the plugin as observer).',
    ),
  z
    .object({
      do: z.literal('deliverSubscribed'),
      label: z.string().min(1),
      expect: z.object({ ack: z.literal(true) }).strict(),
      within: TimeRef,
      withinForInterceptors: TimeRef.optional().describe(
        'The bound for a plugin with messages.intercept, which decides in its handler (default: within).',
      ),
      ...checked,
    })
    .strict()
    .describe(
      'Sends events.deliver once for each event type other than message.created that the manifest subscribes to (interaction.created, bot.added, bot.removed, conversation.opened), in a group chat, with the fields the host gives that type; a type the manifest does not name is never sent (the growth rule, 5.1), and a plugin that names none is skipped.',
    ),
  z
    .object({ do: z.literal('expectReplies'), label: z.string().min(1), ...checked })
    .strict()
    .describe(
      'Every reply a handler of the label sent was taken by the host pieces (checked and rendered for QQ Bot), but a reply to an event that takes none (bot.removed), which is refused with message.reference.unavailable, after which the plugin completes the event with no error or with that code; skipped when the handlers sent no reply.',
    ),
  z
    .object({ do: z.literal('release'), label: z.string().min(1) })
    .strict()
    .describe('Answers the held messages.reply calls of a label.'),
  z
    .object({ do: z.literal('awaitCompletion'), label: z.string().min(1), within: TimeRef, ...checked })
    .strict()
    .describe('Each accepted event of the label gets exactly one events.completed, after its ACK.'),
  z
    .object({ do: z.literal('expectMarkdownRefusal'), label: z.string().min(1), ...checked })
    .strict()
    .describe(
      'When a handler of the label sent Markdown to the one-to-one chat, the host refused it with message.format.unsupported_target and the plugin completed the event with no error or with that code; skipped when it sent no Markdown.',
    ),
  z
    .object({ do: z.literal('stop'), grace: TimeRef, expect: Expect, within: TimeRef, ...checked })
    .strict()
    .describe('Sends plugin.stop with reason "operator" and graceMilliseconds.'),
  z
    .object({ do: z.literal('closeStdin') })
    .strict()
    .describe('Closes the plugin’s stdin (end of file).'),
  z
    .object({ do: z.literal('expectExit'), code: z.enum(['any', 'zero', 'nonZero']), within: TimeRef, ...checked })
    .strict()
    .describe('The process exits within the bound (counted from the step) with this kind of status.'),
  z
    .object({
      do: z.literal('expectOutput'),
      stdout: z.enum(['empty', 'any']),
      stderr: z.enum(['nonEmpty', 'any']),
      ...checked,
    })
    .strict()
    .describe('What the process wrote over its whole run.'),
  z
    .object({ do: z.literal('expectNoProcessLeft'), ...checked })
    .strict()
    .describe('No process of the plugin’s process group is left once it exited.'),
]);
export type ConformanceStep = z.infer<typeof ConformanceStepSchema>;

export const ConformanceScenarioSchema = z
  .object({
    $schema: z.string().optional(),
    id: z.string().regex(/^[a-z0-9-]+$/),
    title: z.string().min(1),
    launch: z.object({ hostStdio: z.boolean().describe('false: start without --host-stdio, as a user would by hand.') }).strict(),
    observe: z
      .array(z.enum(CONFORMANCE_OBSERVED_CHECKS))
      .default([])
      .describe(
        'Checks asserted over the whole run rather than by one step: stdout.frames-only (every byte on stdout belongs to a valid frame), events.decision-first (no reply or completion of an event before its ACK), events.reply-token (every plugin-to-host call carries the token and names a delivered event).',
      ),
    steps: z.array(ConformanceStepSchema).min(1),
  })
  .strict();
export type ConformanceScenario = z.infer<typeof ConformanceScenarioSchema>;

export const ConformanceCheckSchema = z
  .object({
    id: CheckId,
    title: z.string().min(1),
    section: z.string().min(1).describe('Anchor of docs/protocol/v2.md that states the rule.'),
    fix: z.string().min(1),
  })
  .strict();
export type ConformanceCheck = z.infer<typeof ConformanceCheckSchema>;

export const ConformanceChecksFileSchema = z
  .object({ $schema: z.string().optional(), description: z.string(), checks: z.array(ConformanceCheckSchema).min(1) })
  .strict();

/** Where the spec lives, for links from reports. */
export const SPEC_DOCUMENT_PATH = 'docs/protocol/v2.md';

/** The suite: every check, and the scenarios in the order a runner plays them. */
export const CONFORMANCE_SUITE: { checks: readonly ConformanceCheck[]; scenarios: readonly ConformanceScenario[] } = {
  checks: ConformanceChecksFileSchema.parse(checksFile).checks,
  scenarios: [withoutHostStdio, handshakeOtherPlugin, session, stdinEof, malformedHeader, malformedPayload, malformedLength].map((s) =>
    ConformanceScenarioSchema.parse(s),
  ),
};

/** The value of a named time bound, given the plugin's declared handler deadline. */
export function resolveTimeRef(ref: string, plugin: { handlerDeadlineMilliseconds?: number }): number {
  if (ref === 'plugin.handlerDeadlineMilliseconds')
    return plugin.handlerDeadlineMilliseconds ?? RUNTIME_DEFAULTS.handlerDeadlineMilliseconds;
  const [group, key] = ref.split('.') as [string, string];
  const table: Record<string, number> | undefined =
    group === 'RUNTIME_DEFAULTS' ? RUNTIME_DEFAULTS : group === 'LIMITS' ? (LIMITS as Record<string, number>) : undefined;
  const value = table?.[key];
  if (value === undefined) throw new Error(`unknown time bound "${ref}"`);
  return value;
}
