import { ready } from '../i18n';
import { fireEvent, render } from '@testing-library/react';
import { imageUrl, markdownWithMentionLinks, ProviderMessage, safeUrl, type ButtonPress } from './ProviderMessage';

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

  it("shows a rich-media body's image under its text, with no referrer; an address that is not a web one stays JSON", () => {
    const { container } = render(
      <ProviderMessage
        body={{ msg_type: 7, content: 'thanks', media: { file_type: 1, url: 'https://example.com/a.png' }, event_id: 'e1' }}
      />,
    );
    const img = container.querySelector('figure.provider-media img')!;
    expect(img.getAttribute('src')).toBe('https://example.com/a.png');
    expect(img.getAttribute('alt')).toBe('Image sent by the plugin');
    expect(img.getAttribute('referrerpolicy')).toBe('no-referrer');
    expect(container.querySelector('figcaption')?.textContent).toBe('thanks');
    // The renderer's one space of an otherwise empty content shows no caption.
    const bare = render(
      <ProviderMessage body={{ msg_type: 7, content: ' ', media: { file_type: 1, url: 'https://example.com/b.png' } }} />,
    );
    expect(bare.container.querySelector('figcaption')).toBeNull();
    const script = render(<ProviderMessage body={{ msg_type: 7, content: ' ', media: { file_type: 1, url: 'javascript:alert(1)' } }} />);
    expect(script.container.querySelector('img')).toBeNull();
    expect(script.container.querySelector('pre')?.textContent).toContain('javascript:alert(1)');
  });

  const button = (id: string, label: string, type: 0 | 1 | 2, data: string, extra: object = {}) => ({
    id,
    render_data: { label, visited_label: label, style: id === 'yes' ? 1 : 0 },
    action: { type, data, permission: { type: 2 }, unsupport_tips: label, ...extra },
  });
  const keyboardBody = {
    msg_type: 2,
    markdown: { content: '**Vote?**' },
    keyboard: {
      content: {
        rows: [
          { buttons: [button('yes', 'Yes', 1, 'vote:yes'), button('no', 'No', 1, 'vote:no')] },
          {
            buttons: [
              button('docs', 'Docs', 0, 'https://example.com/docs'),
              button('bad', 'Bad', 0, 'javascript:alert(1)'),
              button('help', 'Help', 2, '/help', { enter: true }),
            ],
          },
        ],
      },
    },
  };

  it('shows a keyboard in its rows: callback and command buttons report their press, link buttons open web addresses only', () => {
    const pressed: ButtonPress[] = [];
    const { container, getByRole } = render(<ProviderMessage body={keyboardBody} onPress={(p) => pressed.push(p)} />);
    expect(container.querySelector('strong')?.textContent).toBe('Vote?');
    const rows = [...container.querySelectorAll('.provider-keyboard .keyboard-row')].map((r) => [...r.children].map((b) => b.textContent));
    expect(rows).toEqual([
      ['Yes', 'No'],
      ['Docs', 'Bad', 'Help'],
    ]);
    expect(getByRole('group', { name: 'Buttons' })).toBeTruthy();
    expect(getByRole('button', { name: 'Yes' }).className).toBe('keyboard-button primary');
    const docs = getByRole('link', { name: 'Docs' });
    expect(docs.getAttribute('href')).toBe('https://example.com/docs');
    expect(docs.getAttribute('rel')).toBe('noopener noreferrer nofollow');
    // A link button whose address is not a web one shows without an address.
    expect(container.querySelectorAll('a')).toHaveLength(1);
    expect(container.innerHTML).not.toContain('javascript:');
    fireEvent.click(getByRole('button', { name: 'No' }));
    fireEvent.click(getByRole('button', { name: 'Help' }));
    expect(pressed).toEqual([
      { label: 'No', kind: 'callback', data: 'vote:no', buttonId: 'no' },
      { label: 'Help', kind: 'command', text: '/help', send: true },
    ]);
  });

  it('shows the buttons disabled where nothing takes a press', () => {
    const { getByRole } = render(<ProviderMessage body={keyboardBody} />);
    expect((getByRole('button', { name: 'Yes' }) as HTMLButtonElement).disabled).toBe(true);
  });

  it("takes an image from a web address or a path of this host only (the console's uploaded media)", () => {
    expect(imageUrl('/api/console/media/m-1')).toBe('/api/console/media/m-1');
    expect(imageUrl('https://example.com/a.png')).toBe('https://example.com/a.png');
    for (const bad of [
      '//evil.example/a.png',
      '/\\evil.example/a.png',
      'javascript:alert(1)',
      'data:image/png;base64,AA',
      'mention:u1',
      'a.png',
    ])
      expect(imageUrl(bad)).toBe('');
    const { container } = render(
      <ProviderMessage body={{ msg_type: 7, content: ' ', media: { file_type: 1, url: '/api/console/media/m-1' } }} />,
    );
    expect(container.querySelector('img')?.getAttribute('src')).toBe('/api/console/media/m-1');
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
