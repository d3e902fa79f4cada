import type { z } from 'zod';
import { CommandSchema } from '@host/protocol';
import { matchCommand } from './command-matcher';

type CommandInput = z.input<typeof CommandSchema>;
const cmd = (c: CommandInput) => CommandSchema.parse(c);

describe('matchCommand', () => {
  const echo = cmd({ name: 'echo', aliases: ['say'], prefixes: ['/', '!'], priority: 5 });

  it.each([
    ['/echo hi there', { name: 'echo', word: 'echo', prefix: '/', args: 'hi there' }],
    ['   !SAY   loud  ', { name: 'echo', word: 'say', prefix: '!', args: 'loud  ' }],
    ['/echo', { name: 'echo', word: 'echo', prefix: '/', args: '' }],
    ['/echo\nnext line', { name: 'echo', word: 'echo', prefix: '/', args: 'next line' }],
  ])('matches %j', (text, match) => {
    expect(matchCommand(text, [echo], 'group')).toEqual({ match, priority: 5 });
  });

  it.each(['/echoes', 'echo hi', '/ echo', 'hello /echo', ''])('does not match %j', (text) => {
    expect(matchCommand(text, [echo], 'group')).toBeNull();
  });

  it('prefers the longest prefix and word', () => {
    const short = cmd({ name: 'git', prefixes: ['/'] });
    const long = cmd({ name: 'git-log', prefixes: ['/'] });
    const bare = cmd({ name: 'log', prefixes: ['/git-'] });
    expect(matchCommand('/git-log 5', [short, long], 'group')!.match.name).toBe('git-log');
    expect(matchCommand('/git 5', [short, long], 'group')!.match.name).toBe('git');
    // "/git-" + "log" and "/" + "git-log" are equally long: the first declared wins.
    expect(matchCommand('/git-log', [bare, long], 'group')!.match).toEqual({ name: 'log', word: 'log', prefix: '/git-', args: '' });
  });

  it('matches the bare word with an empty prefix', () => {
    expect(matchCommand('weather Paris', [cmd({ name: 'weather', prefixes: [''] })], 'c2c')!.match.args).toBe('Paris');
  });

  it('honours conversationScopes', () => {
    const groupOnly = cmd({ name: 'kick', conversationScopes: ['group'] });
    expect(matchCommand('/kick bob', [groupOnly], 'group')).not.toBeNull();
    expect(matchCommand('/kick bob', [groupOnly], 'c2c')).toBeNull();
  });
});
