import { matchCommand as matchCommandText, type Command, type CommandMatch, type ConversationType } from '@host/protocol';

export interface MatchedCommand {
  match: CommandMatch;
  priority: number;
}

/**
 * Matches message text against one plugin's commands with the protocol's
 * matcher (docs/protocol/v2.md, "Routing") and carries the matched command's
 * priority for ordering.
 */
export function matchCommand(text: string, commands: readonly Command[], conversation: ConversationType): MatchedCommand | null {
  const found = matchCommandText(text, commands, conversation);
  return found ? { match: found.match, priority: commands[found.index]!.priority } : null;
}
