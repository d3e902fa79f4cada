// One compiled pattern per rule: escaping runs for every text part of every outgoing message.
const ENTITY_SPECIAL = /[&<>]/g;
const ENTITY: Readonly<Record<string, string>> = { '&': '&amp;', '<': '&lt;', '>': '&gt;' };

/** U+2060 WORD JOINER: invisible, no line break, so the text reads and wraps as typed. */
export const WORD_JOINER = '\u2060';

/**
 * Escapes text for QQ guild channels and guild direct messages: `&` ->
 * `&amp;`, `<` -> `&lt;`, `>` -> `&gt;`, and nothing else, in one pass (the
 * same result as replacing `&` first, then `<`, then `>`). The platform turns
 * these entities back into the characters once before it shows a guild
 * message, after it has read its own tags (message_format.md of
 * tencent-connect/bot-docs, "转义内容"), so a user sees what was typed and
 * typed tags stay text.
 */
export function escapeText(text: string): string {
  return text.replace(ENTITY_SPECIAL, (c) => ENTITY[c] as string);
}

// `<` that could open a tag: a letter (qqbot-at-user, emoji:, faceType=, b), @ and ! (<@id>, <@!id>), # (<#channel>), / (</b>).
const TAG_START = /<(?=[A-Za-z@#!/])/g;

/**
 * Keeps text in QQ groups and one-to-one chats from forming tags: a word
 * joiner goes after every `<` that could open one (`<qqbot-at-user`, `<@`,
 * `<#`, `<b>`, `</b>`). Nothing else changes, because those chats show
 * entities literally (`&lt;` stays `&lt;` on screen: nonebot/adapter-qq
 * issue #92, fixed there by sending group and C2C text unescaped), so escaping
 * would show the user other characters than were typed.
 */
export function breakTags(text: string): string {
  return text.replace(TAG_START, '<' + WORD_JOINER);
}

// The platform reads the words @everyone in guild content as an everyone mention (message_format.md).
const EVERYONE_WORDS = /@everyone/g;

/** Guild text: escapeText, and the words `@everyone` with a word joiner after `@`, so text never mentions everyone. */
export function escapeGuildText(text: string): string {
  return escapeText(text).replace(EVERYONE_WORDS, '@' + WORD_JOINER + 'everyone');
}

// Every ASCII punctuation character.
const ASCII_PUNCTUATION = /[!-/:-@[-`{-~]/g;

/**
 * Escapes a literal text part of a markdown message (`{"type": "text",
 * "literal": true}`) in one pass: every ASCII punctuation character, `&`, `<`
 * and `>` included, gets a backslash before it, the escape CommonMark defines
 * for each of them. No character of the result starts Markdown syntax
 * (emphasis, links, images, code, headings, lists, quotes, tables), an HTML
 * tag, an entity or a QQ tag, so user text shows as written. Letters, digits,
 * spaces, newlines and non-ASCII characters pass through.
 */
export function escapeMarkdownLiteral(text: string): string {
  return text.replace(ASCII_PUNCTUATION, (c) => '\\' + c);
}

/**
 * Length in Unicode code points (a surrogate pair counts once; a lone
 * surrogate counts once), which is how the provider counts characters.
 */
export function countCodePoints(text: string): number {
  let pairs = 0;
  for (let i = 0; i < text.length - 1; i++) {
    const c = text.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff) {
      const d = text.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        pairs++;
        i++;
      }
    }
  }
  return text.length - pairs;
}
