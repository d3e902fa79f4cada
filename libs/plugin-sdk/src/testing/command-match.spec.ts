import type { Command } from '@host/protocol';
import { matchCommand } from './command-match';

const cmd = (c: Partial<Command> & { name: string }): Command => ({ aliases: [], prefixes: ['/'], priority: 0, ...c });

describe('matchCommand (as the host routes)', () => {
  const commands = [
    cmd({ name: 'echo', aliases: ['e'], prefixes: ['/', '!'] }),
    cmd({ name: 'echoall', prefixes: ['/'] }),
    cmd({ name: 'help', prefixes: [''] }),
  ];

  it.each([
    ['/echo hi there', { name: 'echo', word: 'echo', prefix: '/', args: 'hi there' }],
    ['  !E   spaced', { name: 'echo', word: 'e', prefix: '!', args: 'spaced' }],
    ['/ECHO', { name: 'echo', word: 'echo', prefix: '/', args: '' }],
    ['/echoall x', { name: 'echoall', word: 'echoall', prefix: '/', args: 'x' }],
    ['help me', { name: 'help', word: 'help', prefix: '', args: 'me' }],
    ['/echo\nline two', { name: 'echo', word: 'echo', prefix: '/', args: 'line two' }],
  ])('%j matches', (text, match) => {
    expect(matchCommand(text, commands, 'group')).toEqual(match);
  });

  it.each(['/echoes', 'echo hi', 'helpful', '/ echo', 'say /echo'])('%j does not match', (text) => {
    expect(matchCommand(text, commands, 'group')).toBeUndefined();
  });

  it('prefers the longest prefix + word, then the command declared first', () => {
    const list = [
      cmd({ name: 'a', prefixes: ['!'] }),
      cmd({ name: 'b', aliases: ['!a'], prefixes: [''] }),
      cmd({ name: 'c', aliases: ['a'], prefixes: ['!!'] }),
    ];
    expect(matchCommand('!!a', list, 'group')?.name).toBe('c');
    expect(matchCommand('!a', list, 'group')?.name).toBe('a');
  });

  it('honours conversationScopes', () => {
    const list = [cmd({ name: 'admin', conversationScopes: ['group'] })];
    expect(matchCommand('/admin', list, 'group')?.name).toBe('admin');
    expect(matchCommand('/admin', list, 'c2c')).toBeUndefined();
  });
});
