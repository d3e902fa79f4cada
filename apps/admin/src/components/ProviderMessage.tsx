import type { TFunction } from 'i18next';
import { useTranslation } from 'react-i18next';
import Markdown, { type Components } from 'react-markdown';

const MENTION_USER = /<qqbot-at-user id="([A-Za-z0-9_.:@-]{1,128})" \/>/g;
const MENTION_EVERYONE = /<qqbot-at-everyone \/>/g;
const EVERYONE = '*everyone';

/**
 * The Markdown of a QQ Bot body with its mention tags turned into links the
 * renderer below shows as chips. The ids come from the tag's own alphabet, so
 * they cannot break out of the link.
 */
export function markdownWithMentionLinks(content: string): string {
  return content.replace(MENTION_USER, (_m, id: string) => `[@](mention:${id})`).replace(MENTION_EVERYONE, `[@](mention:${EVERYONE})`);
}

/** Only web links and mention chips survive; anything else (javascript:, data:) becomes an empty address. */
export function safeUrl(url: string): string {
  if (url.startsWith('mention:')) return url;
  try {
    const u = new URL(url);
    return u.protocol === 'https:' || u.protocol === 'http:' ? u.href : '';
  } catch {
    return '';
  }
}

/**
 * The address of an image a body names: a web address, or a path of this host (the console shows a plugin's
 * uploaded image from its own media route); anything else, a protocol-relative `//` or `/\` included, is none.
 */
export function imageUrl(url: string): string {
  if (/^\/(?![/\\])/.test(url)) return url;
  const safe = safeUrl(url);
  return safe.startsWith('mention:') ? '' : safe;
}

function componentsFor(names: Readonly<Record<string, string>>, t: TFunction): Components {
  return {
    a({ href, children }) {
      if (href?.startsWith('mention:')) {
        const id = href.slice('mention:'.length);
        // The client shows a mentioned member by name; the id when the name is unknown.
        const name = id === EVERYONE ? t('mention.everyone') : (names[id] ?? id);
        return (
          <span className="mention" data-mention={id} title={id === EVERYONE ? t('mention.everyoneTitle') : t('mention.userTitle', { id })}>
            @{name}
          </span>
        );
      }
      if (!href) return <span>{children}</span>;
      return (
        <a href={href} target="_blank" rel="noopener noreferrer nofollow">
          {children}
        </a>
      );
    },
  };
}

/** One button of a QQ Bot keyboard body (msg-btn.md of tencent-connect/bot-docs): action 0 link, 1 callback, 2 command. */
export interface KeyboardButton {
  id?: string;
  render_data?: { label?: string; style?: number };
  action?: { type?: number; data?: string; enter?: boolean };
}

/** A click on a callback (1) or command (2) button; link buttons open their URL themselves. */
export type ButtonPress = { label: string } & (
  { kind: 'callback'; data: string; buttonId?: string } | { kind: 'command'; text: string; send: boolean }
);

type Body = {
  msg_type?: number;
  content?: unknown;
  markdown?: { content?: unknown };
  keyboard?: { content?: { rows?: { buttons?: KeyboardButton[] }[] } };
  media?: { url?: unknown };
} | null;

/**
 * The rows of buttons under a Markdown message, as the client shows them: a link button opens its address
 * (web addresses only), a callback or command button calls `onPress`; without it they show, disabled.
 */
function Keyboard({ rows, onPress }: { rows: { buttons?: KeyboardButton[] }[]; onPress?: (press: ButtonPress) => void }) {
  const { t } = useTranslation();
  return (
    <div className="provider-keyboard" role="group" aria-label={t('playground.keyboard')}>
      {rows.map((row, r) => (
        <div key={r} className="keyboard-row">
          {(row.buttons ?? []).map((b, i) => {
            const label = b.render_data?.label ?? '';
            const data = b.action?.data ?? '';
            const className = b.render_data?.style === 1 ? 'keyboard-button primary' : 'keyboard-button';
            if (b.action?.type === 0) {
              const href = safeUrl(data);
              return href ? (
                <a key={i} className={className} href={href} target="_blank" rel="noopener noreferrer nofollow" title={href}>
                  {label}
                </a>
              ) : (
                <span key={i} className={className}>
                  {label}
                </span>
              );
            }
            const press: ButtonPress =
              b.action?.type === 1
                ? { label, kind: 'callback', data, ...(b.id ? { buttonId: b.id } : {}) }
                : { label, kind: 'command', text: data, send: b.action?.enter === true };
            return (
              <button key={i} type="button" className={className} disabled={!onPress} onClick={() => onPress?.(press)}>
                {label}
              </button>
            );
          })}
        </div>
      ))}
    </div>
  );
}

/**
 * A QQ Bot message body as the QQ client would show it: text as text
 * (entities undone), Markdown rendered without raw HTML, images or script
 * links, user mentions as chips with the member's name when `names`
 * knows it, a rich-media message's image with its text, and a keyboard's
 * rows of buttons (`onPress` takes the clicks of callback and command buttons).
 */
export function ProviderMessage({
  body,
  names = {},
  onPress,
}: {
  body: unknown;
  names?: Readonly<Record<string, string>>;
  onPress?: (press: ButtonPress) => void;
}) {
  const { t } = useTranslation();
  const b = body as Body;
  if (b?.msg_type === 2 && typeof b.markdown?.content === 'string') {
    const rows = b.keyboard?.content?.rows;
    return (
      <div className="provider-markdown">
        <Markdown skipHtml urlTransform={safeUrl} disallowedElements={['img']} unwrapDisallowed components={componentsFor(names, t)}>
          {markdownWithMentionLinks(b.markdown.content)}
        </Markdown>
        {Array.isArray(rows) && <Keyboard rows={rows} onPress={onPress} />}
      </div>
    );
  }
  // A group or one-to-one text body goes out as typed (docs/operator/qqbot.md, "Replies"): the client shows it as it
  // is, entities included, and so does the preview.
  if (b?.msg_type === 0 && typeof b.content === 'string') return <p className="provider-text">{b.content}</p>;
  // A rich-media message: the provider uploads the URL and the client shows the image under the text (the
  // renderer puts one space in an empty content, which the platform requires).
  if (b?.msg_type === 7 && typeof b.media?.url === 'string' && imageUrl(b.media.url)) {
    const text = typeof b.content === 'string' ? b.content.trim() : '';
    return (
      <figure className="provider-media">
        <img src={imageUrl(b.media.url)} alt={t('playground.image')} referrerPolicy="no-referrer" loading="lazy" />
        {text !== '' && <figcaption className="provider-text">{text}</figcaption>}
      </figure>
    );
  }
  return (
    <pre className="raw" tabIndex={0}>
      {JSON.stringify(body, null, 2)}
    </pre>
  );
}
