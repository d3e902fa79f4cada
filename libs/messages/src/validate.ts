import { OutgoingMessageSchema, TargetSchema, toValidationIssues, type OutgoingMessage, type Target } from '@host/protocol';
import { z } from 'zod';
import { MAX_COMPOSITE_DEPTH } from './limits';
import { fail, ok, quote, type MessageError, type MessageResult } from './result';

type Issue = z.core.$ZodIssue;

/**
 * Parses with the schema's fast path; only on failure parses again with
 * `reportInput`, which puts the offending value in each issue (so a message
 * says "must be string, not number 5" instead of calling it missing) but
 * turns off zod's compiled fast path, costing several times more per call.
 */
function safeParse<S extends z.ZodType>(schema: S, input: unknown): { ok: true; value: z.output<S> } | { ok: false; issue: Issue } {
  const fast = schema.safeParse(input);
  if (fast.success) return { ok: true, value: fast.data };
  const detailed = schema.safeParse(input, { reportInput: true });
  const issue = (detailed.success ? fast.error : detailed.error).issues[0] as Issue;
  return { ok: false, issue };
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (value === undefined) return 'missing';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'string') return quote(value);
  return typeof value === 'object' ? 'an object' : `${typeof value} ${String(value)}`;
}

/**
 * Checks what the schema's recursive union cannot check cheaply or explain
 * well, before the schema runs: every part is an object of a known type (and
 * a mention has a known target), and composites nest at most
 * MAX_COMPOSITE_DEPTH deep. Checking depth first also bounds the recursion of
 * the schema itself, so a hostile message of thousands of nested composites
 * is refused instead of exhausting the stack. The recursion here stops at the
 * depth limit, so it is bounded too.
 */
function scanParts(parts: readonly unknown[], path: string, depth: number): MessageError | undefined {
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i];
    if (typeof part !== 'object' || part === null || Array.isArray(part)) {
      return fail('message.part.unsupported', `${path}[${i}] is ${describe(part)}, not a part object.`).error;
    }
    const { type, target } = part as { type?: unknown; target?: unknown };
    if (type === 'composite') {
      const inner = (part as { parts?: unknown }).parts;
      if (!Array.isArray(inner)) continue; // the schema reports the missing array
      if (depth >= MAX_COMPOSITE_DEPTH) {
        return fail(
          'message.part.unsupported',
          `${path}[${i}] nests composites ${depth + 1} levels deep; at most ${MAX_COMPOSITE_DEPTH} are allowed. Flatten the message (a composite of plain parts is enough).`,
        ).error;
      }
      const inside = scanParts(inner, `${path}[${i}].parts`, depth + 1);
      if (inside) return inside;
      continue;
    }
    if (type !== 'text' && type !== 'mention' && type !== 'image' && type !== 'file') {
      return fail('message.part.unsupported', `${path}[${i}] has type ${describe(type)}.`).error;
    }
    if (type === 'mention' && target !== 'user' && target !== 'everyone') {
      return fail('message.part.unsupported', `${path}[${i}] is a mention with target ${describe(target)}; use "user" or "everyone".`)
        .error;
    }
    // Only composites have children; refusing the key here also keeps the
    // schema's composite branch from descending into it unbounded.
    if ('parts' in part) {
      return fail('message.part.unsupported', `${path}[${i}] is a ${type} part and cannot have "parts"; use a composite part.`).error;
    }
  }
  return undefined;
}

// A branch of the part union whose `type` or `target` literal did not match
// is not the branch the sender meant; the scan above guarantees one matches.
function isDiscriminatorMismatch(issue: Issue): boolean {
  return issue.code === 'invalid_value' && issue.path.length === 1 && (issue.path[0] === 'type' || issue.path[0] === 'target');
}

/** The innermost issue of the branch the sender meant, with its full path. */
function leafIssue(issue: Issue, base: readonly PropertyKey[]): Issue {
  const path = [...base, ...issue.path];
  if (issue.code === 'invalid_union') {
    const branch = issue.errors.find((b) => !b.some(isDiscriminatorMismatch)) ?? issue.errors[0];
    const first = branch?.[0];
    if (first) return leafIssue(first, path);
  }
  return { ...issue, path } as Issue;
}

function issueText(issue: Issue): string {
  return toValidationIssues(new z.ZodError([issue]), 'message')[0]?.message ?? issue.message;
}

function messageIssue(issue: Issue, input: unknown): MessageError {
  const leaf = leafIssue(issue, []);
  const path = leaf.path;
  if (path.length === 0 && leaf.code === 'invalid_type') {
    return fail('message.empty', `The message must be an object {"format"?, "parts": [...]}, not ${describe(input)}.`).error;
  }
  // No parts array at all: there is nothing to send.
  if (path.length === 1 && path[0] === 'parts') return fail('message.empty', issueText(leaf)).error;
  if (path[0] === 'parts' && path[path.length - 1] === 'id') return fail('message.mention.invalid_id', issueText(leaf)).error;
  if (path[0] === 'keyboard') return fail('message.keyboard.invalid', issueText(leaf)).error;
  return fail('message.part.unsupported', issueText(leaf)).error;
}

/**
 * Validates an outgoing message with the protocol's OutgoingMessageSchema
 * (fills `format: "text"`). Unknown part types, misshapen parts and unknown
 * fields are `message.part.unsupported`; a misshapen keyboard is
 * `message.keyboard.invalid`; a mention id of the wrong type is
 * `message.mention.invalid_id`; a missing `parts` array is `message.empty`.
 */
export function parseOutgoingMessage(input: unknown): MessageResult<OutgoingMessage> {
  const parts = typeof input === 'object' && input !== null ? (input as { parts?: unknown }).parts : undefined;
  if (Array.isArray(parts)) {
    const error = scanParts(parts, 'parts', 0);
    if (error) return { ok: false, error };
  }
  const parsed = safeParse(OutgoingMessageSchema, input);
  return parsed.ok ? ok(parsed.value) : { ok: false, error: messageIssue(parsed.issue, input) };
}

/** Validates a target with the protocol's TargetSchema; any failure is `message.target.invalid`. */
export function parseTarget(input: unknown): MessageResult<Target> {
  const parsed = safeParse(TargetSchema, input);
  if (parsed.ok) return ok(parsed.value);
  const first = parsed.issue;
  const detail =
    first.path.length === 0 && first.code === 'invalid_type'
      ? `The target must be an object {"type", "id"}, not ${describe(input)}.`
      : first.code === 'too_small' && first.path[0] === 'id'
        ? '"target.id" is empty: use the conversation id from the event.'
        : issueText({ ...first, path: ['target', ...first.path] } as Issue);
  return fail('message.target.invalid', detail);
}
