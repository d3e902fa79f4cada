import type { Button, ChatEvent, FilePart, ImagePart, Interaction, Keyboard, MessageEvent } from '@host/protocol';
import type { MessageContext, UploadedMedia } from './context';

/** Builders of image parts: `image.fromUrl("https://...", { alt })`. */
export const image = {
  /** An image the host has the provider fetch from `url` (an absolute http or https URL on a public address). */
  fromUrl(url: string, options: { alt?: string } = {}): ImagePart {
    return { type: 'image', url, ...(options.alt !== undefined ? { alt: options.alt } : {}) };
  },
  /** An image of bytes this plugin uploaded: the answer of `ctx.uploadMedia` or its `mediaId`. */
  fromMedia(media: UploadedMedia | string, options: { alt?: string } = {}): ImagePart {
    const mediaId = typeof media === 'string' ? media : media.mediaId;
    return { type: 'image', mediaId, ...(options.alt !== undefined ? { alt: options.alt } : {}) };
  },
};

/** Builders of file parts: `file.fromUrl("https://...", { fileName })`. */
export const file = {
  /** A file the host has the provider fetch from `url`. */
  fromUrl(url: string, options: { fileName?: string } = {}): FilePart {
    return { type: 'file', url, ...(options.fileName !== undefined ? { fileName: options.fileName } : {}) };
  },
  /** A file of bytes this plugin uploaded: the answer of `ctx.uploadMedia` or its `mediaId`. */
  fromMedia(media: UploadedMedia | string, options: { fileName?: string } = {}): FilePart {
    const mediaId = typeof media === 'string' ? media : media.mediaId;
    return { type: 'file', mediaId, ...(options.fileName !== undefined ? { fileName: options.fileName } : {}) };
  },
};

type ButtonOptions = { id?: string; style?: 'primary' | 'secondary' };

/** A button that gives `data` back to the plugin in `onInteraction` when clicked. */
export function callbackButton(label: string, data: string, options: ButtonOptions = {}): Button {
  return { ...options, label, style: options.style ?? 'secondary', action: 'callback', data, send: false };
}

/** A button that opens `url` in the user's client. */
export function linkButton(label: string, url: string, options: ButtonOptions = {}): Button {
  return { ...options, label, style: options.style ?? 'secondary', action: 'link', data: url, send: false };
}

/** A button that puts `text` into the user's input box (and sends it with `send: true`). */
export function commandButton(label: string, text: string, options: ButtonOptions & { send?: boolean } = {}): Button {
  const { send, ...rest } = options;
  return { ...rest, label, style: options.style ?? 'secondary', action: 'command', data: text, send: send === true };
}

/**
 * Rows of buttons for a Markdown reply: `ctx.replyMarkdown("Vote?", keyboard().row(callbackButton("Yes", "y")))`.
 * The host checks the limits (5 rows of 5 buttons) and the SDK checks them before sending.
 */
export class KeyboardBuilder {
  private readonly rows: Button[][] = [];

  /** Adds a row of buttons. */
  row(...buttons: Button[]): this {
    this.rows.push(buttons);
    return this;
  }

  /** The keyboard as it goes on the wire. */
  build(): Keyboard {
    return { rows: this.rows.map((buttons) => ({ buttons: [...buttons] })) };
  }
}

/**
 * Starts a keyboard; add rows with `.row(...)`.
 *
 * @example
 * ```ts
 * import { callbackButton, definePlugin, image, keyboard } from '@host/plugin-sdk-v2';
 *
 * export default definePlugin({
 *   pluginId: 'com.example.vote',
 *   async onMessage(ctx) {
 *     await ctx.replyMarkdown('**Vote?**', keyboard().row(callbackButton('Yes', 'vote:yes'), callbackButton('No', 'vote:no')));
 *   },
 *   async onInteraction(ctx) {
 *     await ctx.reply(`you chose ${ctx.interaction.data} `, image.fromUrl('https://cdn.example.com/thanks.png'));
 *   },
 * });
 * ```
 */
export function keyboard(): KeyboardBuilder {
  return new KeyboardBuilder();
}

/**
 * The context of a handler of an event other than a message: the message context without the message members
 * (`message`, `text`, `args`, `command`), with `event` the event of its own type.
 */
export type EventContext<E extends ChatEvent = ChatEvent> = Omit<MessageContext, 'event' | 'message' | 'text' | 'args' | 'command'> & {
  /** The event, exactly as the host sent it. */
  readonly event: E;
};

/** The context of `onInteraction`: the click and who clicked. */
export type InteractionContext = EventContext<ChatEvent & { eventType: 'interaction.created' }> & {
  /** The click: `data` of the callback button, its id. */
  readonly interaction: Interaction;
};

export type InteractionHandler = (ctx: InteractionContext) => void | Promise<void>;
export type ChatEventHandler = (ctx: EventContext) => void | Promise<void>;

/** Where the SDK keeps a chat event on the message-shaped event its dispatch path carries. */
const CHAT_EVENT = 'chatEvent';

/**
 * A chat event as the SDK's one dispatch path carries it: message-shaped, with no text (no command matches)
 * and, for an event that takes no reply, a reference without a message id (a reply is refused locally).
 */
export function carrierOf(event: ChatEvent): MessageEvent {
  const target = { group: 'group', c2c: 'user', channel: 'channel', direct: 'direct' } as const;
  const carrier = {
    eventId: event.eventId,
    eventType: event.eventType,
    timestamp: event.timestamp,
    source: event.source,
    bot: event.bot,
    conversation: event.conversation,
    sender: event.sender ?? { provider: event.source, mentionId: 'unknown' },
    message: { id: event.eventId, content: '', attachments: [], mentions: [] },
    messageReference: event.messageReference ?? {
      messageId: '',
      targetType: target[event.conversation.type],
      targetId: event.conversation.conversationId,
      restrictions: [],
    },
    [CHAT_EVENT]: event,
  };
  return carrier as unknown as MessageEvent;
}

/** The chat event a carrier holds; undefined for a message event. */
export function chatEventOf(event: MessageEvent): ChatEvent | undefined {
  const kept = (event as unknown as Record<string, unknown>)[CHAT_EVENT];
  return kept !== null && typeof kept === 'object' ? (kept as ChatEvent) : undefined;
}
