/**
 * Rules of outgoing messages that the protocol's LIMITS do not name because
 * they belong to this library's normalisation (every SDK applies the same
 * ones; the shared vectors pin them).
 */

/** Deepest allowed composite nesting: a composite directly in `parts` is at depth 1. */
export const MAX_COMPOSITE_DEPTH = 8;

/**
 * A user mention id: the provider's opaque id (QQ openids are hex; others use
 * `:` `@` `.` `_` `-`). No quote, space, `<`, `>` or `&`, so an id can never
 * break out of the `id="..."` attribute of a mention tag.
 */
export const MENTION_ID_PATTERN = /^[A-Za-z0-9_.:@-]{1,128}$/;
