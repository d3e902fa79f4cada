import { mapDispatch, stripOwnMention, unescapeGuildContent } from './event-mapping';

const BOT = { botAccountId: 'main', appId: '102000001' };
const NOW = Date.parse('2026-01-02T02:00:30Z');

/**
 * An AT_MESSAGE_CREATE as the platform pushes it: the Message object of
 * tencent-connect/bot-docs (docs/develop/api-v2/server-inter/message/send-receive/event.md,
 * "示例"), with the bot's own mention first in content and in mentions
 * (flagged bot), and content escaped (message_format.md, "转义内容").
 */
function atMessage(content: string, mentions: { id: string; username: string; bot: boolean }[]) {
  return {
    op: 0,
    id: 'AT_MESSAGE_CREATE:e1',
    t: 'AT_MESSAGE_CREATE',
    d: {
      author: { avatar: 'http://thirdqq.qlogo.cn/0', bot: false, id: '1234', username: 'abc' },
      channel_id: '100010',
      content,
      guild_id: '18700000000001',
      id: '0812345677890abcdef',
      member: { joined_at: '2021-04-12T16:34:42+08:00', roles: ['1'] },
      mentions,
      timestamp: '2026-01-02T10:00:00+08:00',
      seq: 101,
    },
  };
}

const SELF = { id: '11586990140073229091', username: 'test-bot', bot: true };

function mapped(payload: object, bot: object = BOT) {
  const r = mapDispatch(payload, bot as typeof BOT, NOW);
  if (!r.ok) throw new Error(r.reason);
  return r.event;
}

describe('guild messages (AT_MESSAGE_CREATE)', () => {
  it('unescapes the content once and strips the bot own mention before the command, keeping it in mentions', () => {
    const event = mapped(atMessage(`<@!${SELF.id}> /echo a &lt;b&gt; &amp;amp; c`, [SELF]));
    expect(event.message.content).toBe('/echo a <b> &amp; c');
    expect(event.message.mentions).toEqual([{ provider: 'qqbot', mentionId: SELF.id, displayName: 'test-bot' }]);
  });

  it('strips the bot mention at the end, and only the bot own: another user mention stays in the text', () => {
    const other = { id: '222', username: 'bob', bot: false };
    expect(mapped(atMessage(`/ban <@!222> <@${SELF.id}>`, [other, SELF])).message.content).toBe('/ban <@!222>');
    expect(mapped(atMessage(`hi <@!222>`, [other])).message.content).toBe('hi <@!222>');
  });

  it('says what a reply to each chat may use', () => {
    const channel = mapped(atMessage(`<@!${SELF.id}> x`, [SELF]));
    expect(channel.messageReference.restrictions).toEqual([
      'qqbot.passive_reply.window_seconds=300',
      'qqbot.markdown=group_only',
      'qqbot.mention.user=allowed',
      'qqbot.mention.everyone=allowed',
    ]);
    const group = {
      op: 0,
      id: 'GROUP_AT_MESSAGE_CREATE:e2',
      t: 'GROUP_AT_MESSAGE_CREATE',
      d: { id: 'm1', content: ' x', group_openid: 'G1', author: { member_openid: 'M1' }, timestamp: '2026-01-02T10:00:00+08:00' },
    };
    expect(mapped(group).messageReference.restrictions).toContain('qqbot.markdown=not_permitted');
    expect(mapped(group).messageReference.restrictions).toContain('qqbot.mention.everyone=unsupported');
    expect(mapped(group, { ...BOT, markdownAllowed: true }).messageReference.restrictions).toContain('qqbot.markdown=allowed');
    // Group content is not a guild's: an entity in it is what the user typed.
    expect(mapped({ ...group, d: { ...group.d, content: ' a &lt; b' } }).message.content).toBe(' a &lt; b');
  });
});

describe('helpers', () => {
  it('unescapes in one pass', () => {
    expect(unescapeGuildContent('&amp;lt; &lt;&gt; &quot;')).toBe('&lt; <> &quot;');
  });

  it('leaves content without the bot mention as it is', () => {
    expect(stripOwnMention('  /echo hi', ['9'])).toBe('  /echo hi');
    expect(stripOwnMention('<@!9>/echo', ['9'])).toBe('/echo');
    expect(stripOwnMention('<@!9>', ['9'])).toBe('');
  });
});
