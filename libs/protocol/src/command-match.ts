import type { ConversationType } from './common';
import type { CommandMatch } from './event';
import type { Command } from './manifest';

/**
 * Command matching, the one implementation the host routes with and the SDK
 * test kits reproduce (docs/protocol/v2.md, "Routing"). Leading whitespace is
 * ignored; for each command, prefix and word (the name or an alias, compared
 * without case) the text must start with prefix + word, followed by its end or
 * whitespace. The longest prefix + word wins; on equal length the command
 * declared first wins. Commands limited by `conversationScopes` apply only
 * there. `args` is the rest of the text with leading whitespace removed.
 */
export function matchCommand(
  text: string,
  commands: readonly Pick<Command, 'name' | 'aliases' | 'prefixes' | 'conversationScopes'>[],
  conversation: ConversationType,
): { match: CommandMatch; index: number } | undefined {
  if (commands.length === 0) return undefined;
  const trimmed = text.trimStart();
  const lower = trimmed.toLowerCase();
  let best: { index: number; prefix: string; word: string; length: number } | undefined;
  commands.forEach((command, index) => {
    if (command.conversationScopes && !command.conversationScopes.includes(conversation)) return;
    for (const prefix of command.prefixes) {
      for (const word of [command.name, ...command.aliases]) {
        const head = (prefix + word).toLowerCase();
        if (best && head.length <= best.length) continue;
        if (!lower.startsWith(head)) continue;
        const after = trimmed.charAt(head.length);
        if (after !== '' && !/\s/.test(after)) continue;
        best = { index, prefix, word, length: head.length };
      }
    }
  });
  if (!best) return undefined;
  const command = commands[best.index]!;
  return {
    match: { name: command.name, word: best.word, prefix: best.prefix, args: trimmed.slice(best.length).trimStart() },
    index: best.index,
  };
}
