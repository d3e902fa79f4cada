// One compiled pattern for the whole module: escaping runs for every text part
// of every outgoing message.
const SPECIAL = /[&<>]/g;
const ENTITY: Readonly<Record<string, string>> = { '&': '&amp;', '<': '&lt;', '>': '&gt;' };

/**
 * Escapes text-part content for the provider: `&` -> `&amp;`, `<` -> `&lt;`,
 * `>` -> `&gt;`, and nothing else. One pass over the string gives the same
 * result as replacing `&` first, then `<`, then `>` (the documented order):
 * an entity produced here is never escaped again. Quotes, Markdown syntax,
 * newlines (`\n` and `\r\n`) and lone surrogates pass through unchanged.
 */
export function escapeText(text: string): string {
  return text.replace(SPECIAL, (c) => ENTITY[c] as string);
}

// Every ASCII punctuation character: & < > become entities as in escapeText,
// the others take a backslash.
const ASCII_PUNCTUATION = /[!-/:-@[-`{-~]/g;

/**
 * Escapes a literal text part of a markdown message (`{"type": "text",
 * "literal": true}`) in one pass: `&`, `<` and `>` become `&amp;`, `&lt;`
 * and `&gt;` as in escapeText, and every other ASCII punctuation character
 * gets a backslash before it, the escape CommonMark defines for each of them.
 * No character of the result starts Markdown syntax (emphasis, links, images,
 * code, headings, lists, quotes, tables), so user text shows as written.
 * Letters, digits, spaces, newlines and non-ASCII characters pass through.
 */
export function escapeMarkdownLiteral(text: string): string {
  return text.replace(ASCII_PUNCTUATION, (c) => ENTITY[c] ?? '\\' + c);
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
