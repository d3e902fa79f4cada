import {
  LIMITS,
  type Button,
  type EveryoneMentionPart,
  type FilePart,
  type ImagePart,
  type Keyboard,
  type KeyboardInput,
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

export type NormalizedPart = TextPart | UserMentionPart | EveryoneMentionPart | ImagePart | FilePart;

/** A keyboard after normalisation: every button has its id and style. */
export interface NormalizedKeyboard {
  rows: { buttons: (Button & { id: string })[] }[];
}

/**
 * Bidirectional embedding, override and isolate controls (U+202A-U+202E,
 * U+2066-U+2069): they reorder how the text around them is shown, so a
 * plugin echoing user text could make a message display other than it
 * reads. They are removed from text; the marks U+200E/U+200F stay.
 */
const BIDI_CONTROLS = /[\u202A-\u202E\u2066-\u2069]/g;
/** What a link button's data must be: an absolute http or https URL without spaces. */
const LINK_URL = /^https?:\/\/[^\s/?#]+[^\s]*$/;
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
  /** Only on a markdown message; absent when the message has none. */
  keyboard?: NormalizedKeyboard;
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
  media = 0;

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
        case 'image':
        case 'file':
          // A file separates the text around it: a provider may send the two apart.
          this.flushText();
          this.parts.push(part);
          this.media++;
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
  message: Pick<OutgoingMessage, 'parts'> & { format?: MessageFormat; keyboard?: KeyboardInput | Keyboard },
): MessageResult<NormalizedMessage> {
  const flat = new Flattener(message.format === 'markdown');
  const error = flat.add(message.parts, 'parts', 0);
  if (error) return { ok: false, error };
  flat.flushText();
  const parts = flat.parts;
  // Blank means no mention and no text with anything but whitespace (as
  // String.prototype.trim defines it) and zero-width characters; a message without mentions has only
  // text parts, which may be several when literal and other text alternate.
  if (!flat.hasMention && flat.media === 0 && parts.every((p) => (p as TextPart).text.replace(INVISIBLE, '').trim() === '')) {
    return fail('message.empty', parts.length === 0 ? 'It has no parts left.' : 'It has only whitespace or invisible text.');
  }
  if (flat.media > LIMITS.maxMediaParts) {
    return fail(
      'message.media.too_many',
      `It has ${flat.media} image or file parts; a message takes at most ${LIMITS.maxMediaParts}. Send one message per file.`,
    );
  }
  if (parts.length > LIMITS.maxMessageParts) {
    return fail('message.parts.too_many', `It has ${parts.length} parts after merging adjacent text (at most ${LIMITS.maxMessageParts}).`);
  }
  const format = message.format ?? 'text';
  if (message.keyboard === undefined) return ok({ format, parts });
  const keyboard = normalizeKeyboard(message.keyboard, format);
  return keyboard.ok ? ok({ format, parts, keyboard: keyboard.value }) : keyboard;
}

/**
 * Checks a keyboard against the protocol's limits (the smallest a provider shows: QQ Bot's 5 rows of 5) and
 * gives every button its id (`r<row>c<column>` when none) and style. Order: format, size row by row, ids.
 */
export function normalizeKeyboard(keyboard: KeyboardInput | Keyboard, format: MessageFormat): MessageResult<NormalizedKeyboard> {
  if (format !== 'markdown') {
    return fail('message.keyboard.unsupported_format', 'The message has a keyboard and format "text"; send it with format "markdown".');
  }
  const rows = keyboard.rows;
  if (rows.length === 0 || rows.length > LIMITS.maxKeyboardRows) {
    return fail('message.keyboard.too_large', `The keyboard has ${rows.length} rows; it takes 1 to ${LIMITS.maxKeyboardRows}.`);
  }
  const seen = new Map<string, string>();
  const out: NormalizedKeyboard['rows'] = [];
  for (let r = 0; r < rows.length; r++) {
    const buttons = rows[r]!.buttons;
    if (buttons.length === 0 || buttons.length > LIMITS.maxKeyboardButtonsPerRow) {
      return fail(
        'message.keyboard.too_large',
        `keyboard.rows[${r}] has ${buttons.length} buttons; a row takes 1 to ${LIMITS.maxKeyboardButtonsPerRow}.`,
      );
    }
    const row: NormalizedKeyboard['rows'][number]['buttons'] = [];
    for (let c = 0; c < buttons.length; c++) {
      const b = buttons[c]!;
      const id = b.id ?? `r${r}c${c}`;
      const where = `keyboard.rows[${r}].buttons[${c}]`;
      const first = seen.get(id);
      if (first !== undefined) {
        return fail(
          'message.keyboard.invalid',
          `${where} has the id ${quote(id)} of ${first}${b.id === undefined ? ' (its default id)' : ''}.`,
        );
      }
      seen.set(id, where);
      if (b.action === 'link' && !LINK_URL.test(b.data)) {
        return fail(
          'message.keyboard.invalid',
          `${where} is a link button whose data ${quote(b.data)} is not an absolute http or https URL.`,
        );
      }
      row.push({
        id,
        label: b.label,
        style: b.style ?? 'secondary',
        action: b.action,
        data: b.data,
        send: b.action === 'command' && b.send === true,
      });
    }
    out.push({ buttons: row });
  }
  return ok({ rows: out });
}

/** Validates (OutgoingMessageSchema) and normalises an outgoing message from any source. */
export function normalizeMessage(input: OutgoingMessageInput): MessageResult<NormalizedMessage> {
  const parsed = parseOutgoingMessage(input);
  return parsed.ok ? normalizeParsedMessage(parsed.value) : parsed;
}
