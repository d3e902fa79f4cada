export type { MessageError, MessageResult } from './result';
export { breakTags, escapeGuildText, escapeMarkdownLiteral, escapeText, countCodePoints, WORD_JOINER } from './escape';
export { MAX_COMPOSITE_DEPTH, MENTION_ID_PATTERN } from './limits';
export { parseOutgoingMessage, parseTarget } from './validate';
export {
  normalizeMessage,
  normalizeParsedMessage,
  normalizeKeyboard,
  type NormalizedKeyboard,
  type NormalizedMessage,
  type NormalizedPart,
} from './normalize';
export type { ProviderBody, ProviderRenderer } from './renderer';
export { qqbotRenderer, type QQMediaSource, type QQMessageBody } from './qqbot';
export {
  RendererRegistry,
  createDefaultRegistry,
  defaultRegistry,
  registerRenderer,
  getRenderer,
  renderMessage,
  renderParsedMessage,
} from './registry';
export { text, literal, mentionUser, mentionUsers, mentionEveryone, composite, type MentionableUser } from './builders';
