import { ready } from '../i18n';
import { render } from '@testing-library/react';
import { markdownWithMentionLinks, ProviderMessage, safeUrl } from './ProviderMessage';

beforeAll(() => ready);

describe('ProviderMessage (a QQ Bot body as the client shows it)', () => {
  it('shows Markdown with user and everyone mentions as chips', () => {
    const { container } = render(
      <ProviderMessage
        body={{ msg_type: 2, markdown: { content: '<qqbot-at-user id="u_1:a@b" /> said: **hi** <qqbot-at-everyone />' } }}
      />,
    );
    const chips = [...container.querySelectorAll('.mention')].map((c) => c.textContent);
    expect(chips).toEqual(['@u_1:a@b', '@everyone']);
    expect(container.querySelector('strong')?.textContent).toBe('hi');
    expect(container.querySelector('a')).toBeNull();
  });

  it('names a mentioned member when the name is known', () => {
    const { container } = render(
      <ProviderMessage
        body={{ msg_type: 2, markdown: { content: '<qqbot-at-user id="u1" /> <qqbot-at-user id="u2" />' } }}
        names={{ u1: '<b>Alice</b>' }}
      />,
    );
    expect([...container.querySelectorAll('.mention')].map((c) => c.textContent)).toEqual(['@<b>Alice</b>', '@u2']);
    expect(container.querySelector('b')).toBeNull();
  });

  it('never turns plugin text into markup: escaped tags stay text, raw HTML, images and script links are dropped', () => {
    const content =
      '&lt;img src=x onerror=alert(1)&gt; <img src=x onerror="alert(2)"> <script>alert(3)</script> ![i](https://x.example/i.png) [go](javascript:alert(4)) [ok](https://example.com/a)';
    const { container } = render(<ProviderMessage body={{ msg_type: 2, markdown: { content } }} />);
    expect(container.querySelectorAll('img, script, iframe')).toHaveLength(0);
    expect(container.textContent).toContain('<img src=x onerror=alert(1)>');
    const links = [...container.querySelectorAll('a')];
    expect(links.map((a) => a.getAttribute('href'))).toEqual(['https://example.com/a']);
    expect(links[0]!.getAttribute('rel')).toBe('noopener noreferrer nofollow');
    expect(container.innerHTML).not.toMatch(/javascript:|onerror="alert\(2\)"/);
  });

  it('shows text bodies as they go out (as the client shows them: entities stay as typed), and anything else as JSON', () => {
    const text = render(<ProviderMessage body={{ msg_type: 0, content: '@Alice <\u2060b>x<\u2060/b> &lt;i&gt; &amp;' }} />);
    expect(text.container.textContent).toBe('@Alice <\u2060b>x<\u2060/b> &lt;i&gt; &amp;');
    expect(text.container.querySelector('b')).toBeNull();
    const other = render(<ProviderMessage body={{ unexpected: '<i>x</i>' }} />);
    expect(other.container.querySelector('pre')?.textContent).toContain('"unexpected": "<i>x</i>"');
    expect(other.container.querySelector('i')).toBeNull();
  });

  it('helpers: only http(s) and mention addresses survive; tags become mention links', () => {
    expect(safeUrl('javascript:alert(1)')).toBe('');
    expect(safeUrl('data:text/html,<b>')).toBe('');
    expect(safeUrl('https://example.com/')).toBe('https://example.com/');
    expect(safeUrl('mention:u1')).toBe('mention:u1');
    expect(markdownWithMentionLinks('a <qqbot-at-user id="u1" /> b')).toBe('a [@](mention:u1) b');
    // A tag with characters outside the id alphabet is not a mention and stays as it is.
    expect(markdownWithMentionLinks('<qqbot-at-user id="u1)[x](javascript:y" />')).toBe('<qqbot-at-user id="u1)[x](javascript:y" />');
  });
});
