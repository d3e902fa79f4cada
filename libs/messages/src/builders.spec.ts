import { LIMITS, OutgoingMessageSchema, type UserRef } from '@host/protocol';
import { composite, mentionEveryone, mentionUser, mentionUsers, normalizeMessage, renderMessage, text } from './index';

const sender: UserRef = { provider: 'qqbot', mentionId: 'MEMBER_1', displayName: 'Alice' };
const group = { type: 'group', id: 'G1' } as const;

describe('part builders', () => {
  it('builds parts that the protocol schema accepts', () => {
    const parts = [text('hi '), mentionUser(sender), text(' '), mentionUser('U2'), mentionEveryone(), composite(text('a'), composite())];
    expect(OutgoingMessageSchema.safeParse({ parts }).success).toBe(true);
  });

  it('mentionUser takes a UserRef or an id; an explicit displayName wins', () => {
    expect(mentionUser(sender)).toEqual({ type: 'mention', target: 'user', id: 'MEMBER_1', displayName: 'Alice' });
    expect(mentionUser(sender, 'Al')).toEqual({ type: 'mention', target: 'user', id: 'MEMBER_1', displayName: 'Al' });
    expect(mentionUser('U2', 'Bob')).toEqual({ type: 'mention', target: 'user', id: 'U2', displayName: 'Bob' });
  });

  it('mentionUser leaves displayName out when there is none', () => {
    const part = mentionUser({ mentionId: 'U3' });
    expect(part).toEqual({ type: 'mention', target: 'user', id: 'U3' });
    expect('displayName' in part).toBe(false);
    expect(JSON.stringify(mentionUser('U4'))).toBe('{"type":"mention","target":"user","id":"U4"}');
  });

  it('mentionUser does not validate; normalisation refuses a bad id with its path', () => {
    const r = normalizeMessage({ parts: [text('x'), composite(mentionUser('bad id'))] });
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.error.code).toBe('message.mention.invalid_id');
      expect(r.error.message).toContain('parts[1].parts[0]');
      expect(r.error.message).toContain('"bad id"');
    }
  });

  it('mentionUsers separates mentions with single spaces inside one composite', () => {
    const r = mentionUsers(sender, 'U2', { mentionId: 'U3' });
    expect(r).toEqual({
      ok: true,
      value: composite(mentionUser(sender), text(' '), mentionUser('U2'), text(' '), mentionUser('U3')),
    });
    if (!r.ok) return;
    expect(renderMessage('qqbot', { format: 'markdown', parts: [r.value, text(' look')] }, group)).toEqual({
      ok: true,
      value: {
        msg_type: 2,
        markdown: { content: '<qqbot-at-user id="MEMBER_1" /> <qqbot-at-user id="U2" /> <qqbot-at-user id="U3" /> look' },
      },
    });
  });

  it('mentionUsers with one user is a composite of that mention only', () => {
    expect(mentionUsers('U1')).toEqual({ ok: true, value: composite(mentionUser('U1')) });
  });

  it(`mentionUsers accepts ${LIMITS.maxMentionUsers} users and refuses none or more`, () => {
    const ids = Array.from({ length: LIMITS.maxMentionUsers + 1 }, (_, i) => `U${i}`);
    const max = mentionUsers(...ids.slice(0, LIMITS.maxMentionUsers));
    expect(max.ok && max.value.parts.length).toBe(LIMITS.maxMentionUsers * 2 - 1);
    for (const users of [[], ids]) {
      const r = mentionUsers(...users);
      expect(r.ok).toBe(false);
      if (!r.ok) {
        expect(r.error.code).toBe('message.mention.too_many');
        expect(r.error.message).toContain(`given ${users.length} users`);
      }
    }
  });

  it('mentionEveryone renders only where QQ shows it: a channel', () => {
    const msg = (format: 'text' | 'markdown') => ({ format, parts: [mentionEveryone(), text(' go')] });
    expect(renderMessage('qqbot', msg('text'), { type: 'channel', id: 'c1' })).toEqual({
      ok: true,
      value: { msg_type: 0, content: '<qqbot-at-everyone /> go' },
    });
    for (const format of ['text', 'markdown'] as const) {
      expect(renderMessage('qqbot', msg(format), group)).toMatchObject({
        ok: false,
        error: { code: 'message.mention.unsupported_target' },
      });
    }
  });

  it('composite of nothing normalises away', () => {
    expect(normalizeMessage({ parts: [composite(), text('x')] })).toEqual({ ok: true, value: { format: 'text', parts: [text('x')] } });
    expect(normalizeMessage({ parts: [composite()] }).ok).toBe(false);
  });
});
