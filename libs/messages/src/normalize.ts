import {
  LIMITS,
  type EveryoneMentionPart,
  type MessageFormat,
  type MessagePart,
  type OutgoingMessage,
  type OutgoingMessageInput,
  type TextPart,
  type UserMentionPart,
} from '@host/protocol';
import { MAX_COMPOSITE_DEPTH, MENTION_ID_PATTERN } from './limits';
import { fail, ok, quote, type MessageError, type MessageResult } from './result';
import { parseOutgoingMessage } from './validate';

export type NormalizedPart = TextPart | UserMentionPart | EveryoneMentionPart;

/**
 * Bidirectional embedding, override and isolate controls (U+202A-U+202E,
 * U+2066-U+2069): they reorder how the text around them is shown, so a
 * plugin echoing user text could make a message display other than it
 * reads. They are removed from text; the marks U+200E/U+200F stay.
 */
const BIDI_CONTROLS = /[\u202A-\u202E\u2066-\u2069]/g;
/** Zero-width characters that show nothing: text made of them and whitespace is blank. */
const INVISIBLE = /[\u200B-\u200D\u2060\uFEFF]/g;

/**
 * A message ready to render: no composites, no empty text, no two text parts
 * with the same `literal` flag side by side, `literal: true` only in markdown
 * (and never `literal: false`), valid mention ids, at most
 * LIMITS.maxMessageParts parts, and not blank. Renderers trust these
 * properties and do not check them again.
 */
export interface NormalizedMessage {
  format: MessageFormat;
  parts: NormalizedPart[];
}

function invalidId(id: string, where: string): MessageError {
  const why =
    id.length === 0
      ? 'is empty'
      : id.length > 128
        ? `is ${id.length} characters long (at most 128)`
        : 'has a character other than letters, digits and _ . : @ -';
  return fail('message.mention.invalid_id', `The mention id ${quote(id)} at ${where} ${why}.`).error;
}

class Flattener {
  readonly parts: NormalizedPart[] = [];
  // Adjacent text, including text across composite boundaries, merges into
  // one part when both are literal or both are not.
  private pendingText = '';
  private pendingLiteral = false;
  hasMention = false;

  /** `literal` matters only in markdown: text format shows every text part as written. */
  constructor(private readonly markdown: boolean) {}

  /** Returns the first error, in document order. */
  add(parts: readonly MessagePart[], path: string, depth: number): MessageError | undefined {
    for (let i = 0; i < parts.length; i++) {
      const part = parts[i] as MessagePart;
      switch (part.type) {
        case 'text': {
          // Empty text disappears here; whitespace-only text is kept because
          // it separates words (for example between two mentions).
          if (part.text === '') break;
          const literal = this.markdown && part.literal === true;
          if (literal !== this.pendingLiteral) this.flushText();
          this.pendingLiteral = literal;
          this.pendingText += part.text.replace(BIDI_CONTROLS, '');
          break;
        }
        case 'mention':
          if (part.target === 'user' && !MENTION_ID_PATTERN.test(part.id)) return invalidId(part.id, `${path}[${i}]`);
          this.flushText();
          this.parts.push(part);
          this.hasMention = true;
          break;
        case 'composite': {
          // Parsed input was depth-checked already; this guards callers that
          // build messages in code and skip parsing.
          if (depth >= MAX_COMPOSITE_DEPTH) {
            return fail(
              'message.part.unsupported',
              `${path}[${i}] nests composites ${depth + 1} levels deep; at most ${MAX_COMPOSITE_DEPTH} are allowed. Flatten the message.`,
            ).error;
          }
          // An empty composite contributes nothing; text on either side of it merges.
          const error = this.add(part.parts, `${path}[${i}].parts`, depth + 1);
          if (error) return error;
          break;
        }
        default:
          return fail('message.part.unsupported', `${path}[${i}] has type ${quote(String((part as { type?: unknown }).type))}.`).error;
      }
    }
    return undefined;
  }

  flushText(): void {
    if (this.pendingText !== '') {
      this.parts.push(
        this.pendingLiteral ? { type: 'text', text: this.pendingText, literal: true } : { type: 'text', text: this.pendingText },
      );
      this.pendingText = '';
    }
  }
}

/**
 * Normalises a message that already passed OutgoingMessageSchema (the host's
 * RPC and HTTP schemas embed it), without validating its shape again.
 * Order of checks, first failure wins: composite depth and mention ids in
 * document order, then emptiness, then the part count.
 */
export function normalizeParsedMessage(
  message: Pick<OutgoingMessage, 'parts'> & { format?: MessageFormat },
): MessageResult<NormalizedMessage> {
  const flat = new Flattener(message.format === 'markdown');
  const error = flat.add(message.parts, 'parts', 0);
  if (error) return { ok: false, error };
  flat.flushText();
  const parts = flat.parts;
  // Blank means no mention and no text with anything but whitespace (as
  // String.prototype.trim defines it) and zero-width characters; a message without mentions has only
  // text parts, which may be several when literal and other text alternate.
  if (!flat.hasMention && parts.every((p) => (p as TextPart).text.replace(INVISIBLE, '').trim() === '')) {
    return fail('message.empty', parts.length === 0 ? 'It has no parts left.' : 'It has only whitespace or invisible text.');
  }
  if (parts.length > LIMITS.maxMessageParts) {
    return fail('message.parts.too_many', `It has ${parts.length} parts after merging adjacent text (at most ${LIMITS.maxMessageParts}).`);
  }
  return ok({ format: message.format ?? 'text', parts });
}

/** Validates (OutgoingMessageSchema) and normalises an outgoing message from any source. */
export function normalizeMessage(input: OutgoingMessageInput): MessageResult<NormalizedMessage> {
  const parsed = parseOutgoingMessage(input);
  return parsed.ok ? normalizeParsedMessage(parsed.value) : parsed;
}
