import type { z } from 'zod';
import { CommandSchema } from '@host/protocol';
import { findCommandConflicts, type CommandOwner } from './command-conflicts';
import { selectRecipients } from './routing';
import { InProcessPlugin, makeEvent } from './in-process.spec-helper';

type CommandInput = z.input<typeof CommandSchema>;
const owner = (pluginId: string, ...commands: CommandInput[]): CommandOwner => ({
  pluginId,
  commands: commands.map((c) => CommandSchema.parse(c)),
});

describe('findCommandConflicts', () => {
  it('reports the same prefix and word in two plugins, with the winner by pluginId on equal priority', () => {
    const a = owner('com.a.dice', { name: 'roll' });
    const b = owner('com.b.dice', { name: 'roll' });
    const all = [a, b];
    const conflict = {
      prefix: '/',
      word: 'roll',
      conversationTypes: ['group', 'c2c', 'channel', 'direct'],
      winner: 'com.a.dice',
    };
    expect(findCommandConflicts(a, all)).toEqual([{ ...conflict, command: 'roll', otherPluginId: 'com.b.dice', otherCommand: 'roll' }]);
    expect(findCommandConflicts(b, all)).toEqual([{ ...conflict, command: 'roll', otherPluginId: 'com.a.dice', otherCommand: 'roll' }]);
  });

  it('names the higher priority as the winner, and matches aliases and case as the router does', () => {
    const a = owner('com.a.dice', { name: 'roll' });
    const b = owner('com.b.dice', { name: 'dice', aliases: ['ROLL'], prefixes: ['!', '/'], priority: 3 });
    expect(findCommandConflicts(a, [a, b])).toEqual([
      expect.objectContaining({ command: 'roll', word: 'roll', otherPluginId: 'com.b.dice', otherCommand: 'dice', winner: 'com.b.dice' }),
    ]);
    expect(findCommandConflicts(b, [a, b])).toEqual([
      expect.objectContaining({ command: 'dice', prefix: '/', word: 'ROLL', otherCommand: 'roll', winner: 'com.b.dice' }),
    ]);
  });

  it('counts only conversation types where both commands apply', () => {
    const a = owner('com.a.dice', { name: 'roll', conversationScopes: ['group', 'c2c'] });
    const b = owner('com.b.dice', { name: 'roll', conversationScopes: ['c2c', 'direct'] });
    const c = owner('com.c.dice', { name: 'roll', conversationScopes: ['channel'] });
    expect(findCommandConflicts(a, [a, b, c])).toEqual([
      expect.objectContaining({ otherPluginId: 'com.b.dice', conversationTypes: ['c2c'] }),
    ]);
  });

  it('finds the same text made of another prefix and word, and ignores other prefixes and longer words', () => {
    const a = owner('com.a.x', { name: 'ab', prefixes: ['/'] });
    const b = owner('com.b.x', { name: 'b', prefixes: ['/a'] });
    const c = owner('com.c.x', { name: 'ab', prefixes: ['!'] }, { name: 'abc' });
    expect(findCommandConflicts(a, [a, b, c])).toEqual([expect.objectContaining({ otherPluginId: 'com.b.x', otherCommand: 'b' })]);
    expect(findCommandConflicts(c, [a, b, c])).toEqual([]);
  });

  it('agrees with the delivery order of the router', () => {
    for (const [za, ab] of [
      [1, 0],
      [0, 0],
      [0, 2],
    ]) {
      const a = owner('com.z.dice', { name: 'roll', priority: za });
      const b = owner('com.a.dice', { name: 'roll', priority: ab });
      const [conflict] = findCommandConflicts(b, [a, b]);
      const endpoints = [a, b].map((o) => new InProcessPlugin(o.pluginId, { commands: [...o.commands] }));
      expect(selectRecipients(makeEvent('/roll 2d6'), endpoints)[0]!.endpoint.pluginId).toBe(conflict!.winner);
    }
  });
});
