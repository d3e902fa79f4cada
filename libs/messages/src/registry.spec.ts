import type { Target } from '@host/protocol';
import {
  RendererRegistry,
  createDefaultRegistry,
  defaultRegistry,
  escapeText,
  getRenderer,
  mentionUser,
  qqbotRenderer,
  registerRenderer,
  renderMessage,
  renderParsedMessage,
  text,
  type NormalizedMessage,
  type ProviderRenderer,
} from './index';
import { fail, ok } from './result';

/** A second provider with its own rules: `<@id>` mentions, HTML-like escaping, only group targets. */
type ChatBody = { text: string; format: string };
const chatRenderer: ProviderRenderer<ChatBody> = {
  provider: 'chat',
  render(message: NormalizedMessage, target: Target) {
    if (target.type !== 'group') return fail('message.target.invalid', `chat sends only to groups, not "${target.type}".`);
    const out = message.parts
      .map((p) => (p.type === 'text' ? escapeText(p.text) : p.type !== 'mention' ? p.url : p.target === 'user' ? `<@${p.id}>` : '<!here>'))
      .join('');
    return ok({ text: out, format: message.format });
  },
};

const group: Target = { type: 'group', id: 'G1' };
const message = { parts: [mentionUser('U1', 'Ann'), text(' 1 < 2')] };

describe('RendererRegistry', () => {
  it('a fresh registry is empty and renders a provider registered in it', () => {
    const registry = new RendererRegistry();
    expect(registry.providers()).toEqual([]);
    registerRenderer(chatRenderer, registry);
    expect(getRenderer('chat', registry)).toBe(chatRenderer);
    expect(renderMessage('chat', message, group, registry)).toEqual({ ok: true, value: { text: '<@U1> 1 &lt; 2', format: 'text' } });
  });

  it('another provider does not change qqbot rendering or the default registry', () => {
    const registry = createDefaultRegistry();
    registry.register(chatRenderer);
    expect(registry.providers().sort()).toEqual(['chat', 'qqbot']);
    expect(renderMessage('qqbot', message, group, registry)).toEqual({
      ok: true,
      value: { msg_type: 0, content: '<qqbot-at-user id="U1" /> 1 < 2' },
    });
    expect(renderMessage('qqbot', message, group)).toEqual(renderMessage('qqbot', message, group, registry));
    expect(getRenderer('chat')).toBeUndefined();
    expect(defaultRegistry.providers()).toEqual(['qqbot']);
    expect(getRenderer('qqbot')).toBe(qqbotRenderer);
  });

  it('the registry validates and normalises before the renderer runs', () => {
    const seen: NormalizedMessage[] = [];
    const spy: ProviderRenderer = {
      provider: 'spy',
      render(m) {
        seen.push(m);
        return ok({});
      },
    };
    const registry = new RendererRegistry([spy]);
    expect(renderMessage('spy', { parts: [text('a'), { type: 'composite', parts: [text('b')] }] }, group, registry).ok).toBe(true);
    expect(seen).toEqual([{ format: 'text', parts: [text('ab')] }]);
    const bad = renderMessage('spy', { parts: [] }, group, registry);
    expect(bad.ok || bad.error.code).toBe('message.empty');
    expect(seen).toHaveLength(1);
  });

  it('renderer errors come back as data', () => {
    const registry = new RendererRegistry([chatRenderer]);
    const r = renderMessage('chat', message, { type: 'user', id: 'U9' }, registry);
    expect(r).toEqual({ ok: false, error: { code: 'message.target.invalid', message: expect.stringContaining('not "user"') } });
  });

  it('refuses a second renderer for the same provider', () => {
    const registry = createDefaultRegistry();
    expect(() => registry.register({ ...chatRenderer, provider: 'qqbot' })).toThrow(/already registered/);
    expect(registry.get('qqbot')).toBe(qqbotRenderer);
  });

  it('an unknown provider is a wiring error that names the registered ones', () => {
    expect(() => renderMessage('nope', message, group)).toThrow(
      'No message renderer is registered for provider "nope" (registered: "qqbot")',
    );
    expect(() => renderParsedMessage('nope', { format: 'text', parts: [] }, group, new RendererRegistry())).toThrow(/registered: none/);
  });

  it('renderParsedMessage renders already parsed input the same way', () => {
    const parsed = { format: 'markdown' as const, parts: [mentionUser('U1'), text(' <b>')] };
    expect(renderParsedMessage('qqbot', parsed, group)).toEqual(renderMessage('qqbot', parsed, group));
    expect(renderParsedMessage('qqbot', parsed, group)).toEqual({
      ok: true,
      value: { msg_type: 2, markdown: { content: '<qqbot-at-user id="U1" /> <\u2060b>' } },
    });
  });
});
