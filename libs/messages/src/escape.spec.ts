import { breakTags, countCodePoints, escapeGuildText, escapeMarkdownLiteral, escapeText } from './index';

describe('escapeText', () => {
  it('escapes & < > and nothing else', () => {
    expect(escapeText(`a&b<c>d"e'f*g_h\`i[j](k)#\n\r\n\t`)).toBe(`a&amp;b&lt;c&gt;d"e'f*g_h\`i[j](k)#\n\r\n\t`);
  });

  it('escapes & first: existing entities are escaped again, never unescaped', () => {
    expect(escapeText('&lt;')).toBe('&amp;lt;');
    expect(escapeText('&amp;')).toBe('&amp;amp;');
    expect(escapeText('<&>')).toBe('&lt;&amp;&gt;');
  });

  it('matches replacing & then < then > in sequence', () => {
    const sequential = (s: string) => s.split('&').join('&amp;').split('<').join('&lt;').split('>').join('&gt;');
    for (const s of ['', 'plain', '&&<<>>', '<a href="x">&nbsp;</a>', '>&lt;<', '😀<😀&']) {
      expect(escapeText(s)).toBe(sequential(s));
    }
  });

  it('returns text without special characters unchanged', () => {
    expect(escapeText('你好 😀 **bold**')).toBe('你好 😀 **bold**');
  });

  it('keeps lone surrogates as they are', () => {
    expect(escapeText('\ud800<')).toBe('\ud800&lt;');
  });
});

describe('countCodePoints', () => {
  it('counts a surrogate pair once and everything else per unit', () => {
    expect(countCodePoints('')).toBe(0);
    expect(countCodePoints('abc')).toBe(3);
    expect(countCodePoints('😀')).toBe(1);
    expect(countCodePoints('a😀b😀')).toBe(4);
    expect(countCodePoints('\ud800')).toBe(1);
    expect(countCodePoints('\udc00\ud800')).toBe(2);
    expect(countCodePoints('\ud800\ud83d\ude00')).toBe(2);
    expect(countCodePoints('e\u0301')).toBe(2); // e + combining accent: two code points
  });

  it('agrees with the string iterator', () => {
    for (const s of ['x😀y', '\ud83d', '😀😀\ud800', '中文']) expect(countCodePoints(s)).toBe([...s].length);
  });
});

describe('escapeMarkdownLiteral', () => {
  it('keeps a link and an image from user text from becoming Markdown', () => {
    expect(escapeMarkdownLiteral('[click](http://evil.example) ![img](x)')).toBe(
      '\\[click\\]\\(http\\:\\/\\/evil\\.example\\) \\!\\[img\\]\\(x\\)',
    );
  });

  it('escapes every ASCII punctuation character with a backslash, & < > too, and nothing else', () => {
    for (let code = 0; code < 0x80; code++) {
      const c = String.fromCharCode(code);
      const punctuation = /[!-/:-@[-`{-~]/.test(c);
      expect(escapeMarkdownLiteral(c)).toBe(punctuation ? '\\' + c : c);
    }
    expect(escapeMarkdownLiteral('你好 😀\n')).toBe('你好 😀\n');
  });
});

describe('breakTags (groups and one-to-one chats)', () => {
  it('puts a word joiner after each < that could open a tag, and changes nothing else', () => {
    expect(breakTags('<qqbot-at-user id="x" /> <@!1> <#2> <emoji:4> <b></b>')).toBe(
      '<\u2060qqbot-at-user id="x" /> <\u2060@!1> <\u2060#2> <\u2060emoji:4> <\u2060b><\u2060/b>',
    );
    expect(breakTags('1 < 2 && 3 > 2 &lt; <3 <')).toBe('1 < 2 && 3 > 2 &lt; <3 <');
  });
});

describe('escapeGuildText (channels and guild direct chats)', () => {
  it('escapes & < > and the words @everyone', () => {
    expect(escapeGuildText('@everyone <@!1> &lt;')).toBe('@\u2060everyone &lt;@!1&gt; &amp;lt;');
  });
});
