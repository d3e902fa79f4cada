import { ConversationType, matchCommand, type Command } from '@host/protocol';

/** A plugin's commands, as the registry holds them. */
export interface CommandOwner {
  pluginId: string;
  commands: readonly Command[];
}

/**
 * One prefix + word that this plugin and another both answer in the same
 * conversation types: a message made of it goes to both, `winner` first
 * (docs/protocol/v2.md §6.3: higher priority, then lower pluginId); the other
 * still gets it unless the winner intercepts it.
 */
export interface CommandConflict {
  /** This plugin's command the text selects. */
  command: string;
  /** The prefix and word as this plugin declares them. */
  prefix: string;
  word: string;
  otherPluginId: string;
  /** The other plugin's command the same text selects. */
  otherCommand: string;
  /** Conversation types where both apply. */
  conversationTypes: ConversationType[];
  /** The pluginId that receives the event first. */
  winner: string;
}

const CONVERSATION_TYPES = ConversationType.options;

/**
 * The commands of `plugin` that another plugin also answers, found with the
 * router's own matcher: for every prefix + word of the plugin, the text made
 * of it alone is matched against each other plugin in each conversation type.
 * Sorted by prefix + word, then otherPluginId.
 */
export function findCommandConflicts(plugin: CommandOwner, all: Iterable<CommandOwner>): CommandConflict[] {
  const others = [...all].filter((o) => o.pluginId !== plugin.pluginId && o.commands.length > 0);
  const found = new Map<string, CommandConflict>();
  if (others.length === 0) return [];
  for (const command of plugin.commands) {
    for (const prefix of command.prefixes) {
      for (const word of [command.name, ...command.aliases]) {
        const text = prefix + word;
        for (const type of CONVERSATION_TYPES) {
          const own = matchCommand(text, plugin.commands, type);
          // Another of the plugin's commands takes this text first (same length, declared earlier), or not in this type.
          if (!own || own.match.name !== command.name || own.match.prefix !== prefix || own.match.word !== word) continue;
          const priority = plugin.commands[own.index]!.priority;
          for (const other of others) {
            const theirs = matchCommand(text, other.commands, type);
            if (!theirs) continue;
            const otherPriority = other.commands[theirs.index]!.priority;
            const winner =
              priority !== otherPriority
                ? priority > otherPriority
                  ? plugin.pluginId
                  : other.pluginId
                : plugin.pluginId < other.pluginId
                  ? plugin.pluginId
                  : other.pluginId;
            const key = JSON.stringify([text.toLowerCase(), prefix, word, other.pluginId, theirs.match.name, winner]);
            const entry = found.get(key);
            if (entry) entry.conversationTypes.push(type);
            else {
              found.set(key, {
                command: command.name,
                prefix,
                word,
                otherPluginId: other.pluginId,
                otherCommand: theirs.match.name,
                conversationTypes: [type],
                winner,
              });
            }
          }
        }
      }
    }
  }
  return [...found.values()].sort((a, b) => {
    const x = (a.prefix + a.word).toLowerCase();
    const y = (b.prefix + b.word).toLowerCase();
    return x < y ? -1 : x > y ? 1 : a.otherPluginId < b.otherPluginId ? -1 : a.otherPluginId > b.otherPluginId ? 1 : 0;
  });
}
