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
