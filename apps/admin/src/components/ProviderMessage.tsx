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

/**
 * A QQ Bot message body as the QQ client would show it: text as text
 * (entities undone), Markdown rendered without raw HTML, images or script
 * links, and user mentions as chips with the member's name when `names`
 * knows it.
 */
export function ProviderMessage({ body, names = {} }: { body: unknown; names?: Readonly<Record<string, string>> }) {
  const { t } = useTranslation();
  const b = body as { msg_type?: number; content?: unknown; markdown?: { content?: unknown } } | null;
  if (b?.msg_type === 2 && typeof b.markdown?.content === 'string') {
    return (
      <div className="provider-markdown">
        <Markdown skipHtml urlTransform={safeUrl} disallowedElements={['img']} unwrapDisallowed components={componentsFor(names, t)}>
          {markdownWithMentionLinks(b.markdown.content)}
        </Markdown>
      </div>
    );
  }
  // A group or one-to-one text body goes out as typed (docs/operator/qqbot.md, "Replies"): the client shows it as it
  // is, entities included, and so does the preview.
  if (b?.msg_type === 0 && typeof b.content === 'string') return <p className="provider-text">{b.content}</p>;
  return (
    <pre className="raw" tabIndex={0}>
      {JSON.stringify(body, null, 2)}
    </pre>
  );
}
