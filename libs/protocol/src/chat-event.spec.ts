import { ChatEventSchema, EventType, Methods, subscriptionsTake } from './index';

const base = {
  eventId: 'evt-1',
  timestamp: '2025-05-01T04:30:00Z',
  source: 'qqbot',
  bot: { botAccountId: 'qq-main', platform: 'qqbot' },
  conversation: { type: 'group', conversationId: 'G1' },
};
const sender = { provider: 'qqbot', mentionId: 'M1' };
const messageReference = { messageId: 'event:i-1', targetType: 'group', targetId: 'G1' };

describe('ChatEvent', () => {
  it('takes a click with who clicked, the button data and where a reply goes', () => {
    const parsed = ChatEventSchema.safeParse({
      ...base,
      eventType: 'interaction.created',
      sender,
      interaction: { id: 'i-1', data: 'vote:yes' },
      messageReference,
    });
    expect(parsed.success).toBe(true);
  });

  it.each(['sender', 'interaction', 'messageReference'] as const)('refuses a click without %s', (field) => {
    const event: Record<string, unknown> = {
      ...base,
      eventType: 'interaction.created',
      sender,
      interaction: { id: 'i-1', data: 'd' },
      messageReference,
    };
    delete event[field];
    const parsed = ChatEventSchema.safeParse(event);
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues.map((i) => i.path.join('.'))).toEqual([field]);
  });

  it('takes bot.removed with the envelope alone', () => {
    expect(ChatEventSchema.safeParse({ ...base, eventType: 'bot.removed' }).success).toBe(true);
  });

  it('is what events.deliver carries, and every type it has can be subscribed to', () => {
    expect(Methods.deliver.params).toBe(ChatEventSchema);
    for (const t of ChatEventSchema.shape.eventType.options) expect(EventType.options).toContain(t);
  });
});

describe('subscriptionsTake', () => {
  it('gives a plugin subscribed to message.created none of the other types', () => {
    for (const eventType of ChatEventSchema.shape.eventType.options) {
      expect(subscriptionsTake([{ eventType: 'message.created' }], { eventType, botAccountId: 'b', conversationId: 'c' })).toBe(false);
    }
  });
});
