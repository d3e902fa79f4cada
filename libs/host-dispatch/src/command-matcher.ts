import type { Command, CommandMatch, ConversationType } from '@host/protocol';

export interface MatchedCommand {
  match: CommandMatch;
  priority: number;
}

/**
 * Matches message text against one plugin's commands (docs/protocol/v2.md,
 * "Routing"). Leading whitespace is ignored; for each command, prefix and
 * word (the name or an alias, case-insensitive) the text must start with
 * prefix + word, followed by its end or whitespace. The longest prefix + word
 * wins; on equal length the command declared first wins. `args` is the rest
 * of the text with leading whitespace removed.
 */
export function matchCommand(text: string, commands: readonly Command[], conversation: ConversationType): MatchedCommand | null {
  if (commands.length === 0) return null;
  const t = text.trimStart();
  const lower = t.toLowerCase();
  let best: { command: Command; prefix: string; word: string; length: number } | null = null;
  for (const command of commands) {
    if (command.conversationScopes && !command.conversationScopes.includes(conversation)) continue;
    for (const prefix of command.prefixes) {
      for (const word of [command.name, ...command.aliases]) {
        const candidate = (prefix + word).toLowerCase();
        const length = candidate.length;
        if (best && length <= best.length) continue;
        if (!lower.startsWith(candidate)) continue;
        const next = t.charAt(length);
        if (next !== '' && !/\s/.test(next)) continue;
        best = { command, prefix, word, length };
      }
    }
  }
  if (!best) return null;
  return {
    match: { name: best.command.name, word: best.word, prefix: best.prefix, args: t.slice(best.length).trimStart() },
    priority: best.command.priority,
  };
}
