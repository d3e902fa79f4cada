import { createTestHost } from '@host/plugin-sdk-v2/testing';
import plugin from './plugin';

describe('Echo', () => {
  it('replies in Markdown and mentions the sender in a group', async () => {
    const host = createTestHost(plugin);
    const { ack, replies } = await host.send({ text: '/echo hello', sender: { mentionId: 'user-1', displayName: 'Ann' } });
    expect(ack.accepted).toBe(true);
    expect(replies.map((r) => r.body)).toEqual([{ msg_type: 2, markdown: { content: '<qqbot-at-user id="user-1" /> said: **hello**' } }]);
  });

  it('shows Markdown from the user as text, not as a link or an image', async () => {
    const { replies } = await createTestHost(plugin).send({
      text: '/echo [click](http://evil.example) ![img](x)',
      sender: { mentionId: 'user-1' },
    });
    expect(replies.map((r) => r.body)).toEqual([
      {
        msg_type: 2,
        markdown: { content: '<qqbot-at-user id="user-1" /> said: **\\[click\\]\\(http\\:\\/\\/evil\\.example\\) \\!\\[img\\]\\(x\\)**' },
      },
    ]);
  });

  it('replies in text in a one-to-one chat', async () => {
    const { replies } = await createTestHost(plugin).send({ text: '/echo <hi>', conversation: 'c2c' });
    expect(replies.map((r) => r.content)).toEqual(['You said: <\u2060hi>']);
  });

  it('ignores messages that are not commands', async () => {
    const { ack, replies } = await createTestHost(plugin).send('just chatting');
    expect([ack.accepted, replies]).toEqual([false, []]);
  });
});
