import { matchCommand as matchCommandText, type Command, type CommandMatch, type ConversationType } from '@host/protocol';

/**
 * Command matching as the host does it (the protocol's own matcher, see
 * docs/protocol/v2.md, "Routing"), so a plugin's tests see the `command` the real host would put in the event:
 * leading whitespace is ignored; the text must start with a prefix followed
 * by the command name or an alias, compared without case, and then end or
 * continue with whitespace; the longest prefix + word wins, and on a tie the
 * command declared first; commands limited by conversationScopes apply only
 * there. `args` is the rest of the text without leading whitespace.
 *
 * @example
 * ```ts
 * import { matchCommand } from '@host/plugin-sdk-v2/testing';
 *
 * const match = matchCommand('/E hello', [{ name: 'echo', aliases: ['e'], prefixes: ['/'], priority: 0 }], 'group');
 * // { name: 'echo', word: 'e', prefix: '/', args: 'hello' }
 * ```
 */
export function matchCommand(text: string, commands: readonly Command[], conversation: ConversationType): CommandMatch | undefined {
  return matchCommandText(text, commands, conversation)?.match;
}
