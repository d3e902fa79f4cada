import { ADMIN_ROUTES, type QqBotAccountListResponse, type QqBotAccountView } from '@host/admin-api';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useId, useState, type FormEvent } from 'react';
import { Trans, useTranslation } from 'react-i18next';
import { call } from '../api';
import { Dialog } from '../components/Dialog';
import { ErrorNotice } from '../components/ErrorNotice';
import { formatDateTime } from '../i18n';

function CopyUrl({ url }: { url: string }) {
  const { t } = useTranslation();
  const [copied, setCopied] = useState(false);
  return (
    <button
      type="button"
      className="secondary"
      onClick={() =>
        void navigator.clipboard.writeText(url).then(
          () => setCopied(true),
          () => setCopied(false),
        )
      }
    >
      {copied ? t('common.copied') : t('qqbot.copyUrl')}
    </button>
  );
}

/** Removal of an account added through the admin API, after a confirmation dialog. */
function RemoveAccount({ a }: { a: QqBotAccountView }) {
  const { t } = useTranslation();
  const queryClient = useQueryClient();
  const [confirming, setConfirming] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();
  async function remove() {
    setBusy(true);
    setError(undefined);
    try {
      await call(ADMIN_ROUTES.removeQqBotAccount, { params: { accountId: a.id } });
      setConfirming(false);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
      void queryClient.invalidateQueries({ queryKey: ['qqbot-accounts'] });
    }
  }
  if (a.source === 'file') {
    return <p className="hint">{t('qqbot.readOnly')}</p>;
  }
  return (
    <>
      <div className="buttons">
        <button type="button" className="secondary" onClick={() => setConfirming(true)}>
          {t('qqbot.remove')}
        </button>
      </div>
      {confirming && (
        <Dialog open title={t('qqbot.removeTitle', { id: a.id })} onClose={() => setConfirming(false)}>
          <p>{t('qqbot.removeText')}</p>
          {error !== undefined && <ErrorNotice error={error} title={t('qqbot.notRemoved')} />}
          <div className="buttons">
            <button type="button" className="secondary" onClick={() => setConfirming(false)}>
              {t('common.cancel')}
            </button>
            <button type="button" disabled={busy} onClick={() => void remove()}>
              {t('qqbot.removeConfirm', { id: a.id })}
            </button>
          </div>
        </Dialog>
      )}
    </>
  );
}

/**
 * Adds an account through the admin API. The secret goes to the host only:
 * the answer never contains it, and the field is cleared once the host took it.
 */
function AddAccountPanel() {
  const { t } = useTranslation();
  const queryClient = useQueryClient();
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  const [added, setAdded] = useState<QqBotAccountView>();
  const ids = { id: useId(), appId: useId(), secret: useId(), name: useId(), markdown: useId(), api: useId(), token: useId() };

  async function submit(e: FormEvent<HTMLFormElement>) {
    e.preventDefault();
    const formElement = e.currentTarget;
    const form = new FormData(formElement);
    const field = (name: string) => String(form.get(name) ?? '').trim();
    const optional = (name: string) => (field(name) ? { [name]: field(name) } : {});
    setBusy(true);
    setError(undefined);
    setAdded(undefined);
    try {
      const r = await call<{ account: QqBotAccountView }>(ADMIN_ROUTES.addQqBotAccount, {
        body: {
          id: field('id'),
          appId: field('appId'),
          secret: String(form.get('secret') ?? ''),
          ...optional('displayName'),
          ...optional('apiBaseUrl'),
          ...optional('tokenUrl'),
          ...(form.get('markdown') === 'on' ? { markdown: true } : {}),
        },
      });
      setAdded(r.account);
      formElement.reset();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
      void queryClient.invalidateQueries({ queryKey: ['qqbot-accounts'] });
    }
  }

  return (
    <section className="panel" aria-labelledby="qqbot-add-title">
      <h2 id="qqbot-add-title">{t('qqbot.addTitle')}</h2>
      <form onSubmit={(e) => void submit(e)} className="inline-form" autoComplete="off">
        <div>
          <label htmlFor={ids.id}>{t('qqbot.accountId')}</label>
          <input id={ids.id} name="id" required placeholder="main" />
        </div>
        <div>
          <label htmlFor={ids.appId}>{t('qqbot.appId')}</label>
          <input id={ids.appId} name="appId" required placeholder="102030405" />
        </div>
        <div>
          <label htmlFor={ids.secret}>{t('qqbot.appSecret')}</label>
          <input id={ids.secret} name="secret" type="password" required autoComplete="new-password" spellCheck={false} />
        </div>
        <div>
          <label htmlFor={ids.name}>{t('qqbot.displayName')}</label>
          <input id={ids.name} name="displayName" maxLength={64} />
        </div>
        <div>
          <input id={ids.markdown} name="markdown" type="checkbox" />
          <label htmlFor={ids.markdown}>{t('qqbot.markdown')}</label>
        </div>
        <details>
          <summary>{t('qqbot.addresses')}</summary>
          <div>
            <label htmlFor={ids.api}>{t('qqbot.apiBaseUrl')}</label>
            <input id={ids.api} name="apiBaseUrl" type="url" placeholder="https://api.sgroup.qq.com" />
          </div>
          <div>
            <label htmlFor={ids.token}>{t('qqbot.tokenUrl')}</label>
            <input id={ids.token} name="tokenUrl" type="url" placeholder="https://bots.qq.com/app/getAppAccessToken" />
          </div>
        </details>
        <button type="submit" disabled={busy}>
          {t('qqbot.add')}
        </button>
      </form>
      <p className="hint">{t('qqbot.addHint')}</p>
      {error !== undefined && <ErrorNotice error={error} title={t('qqbot.notAdded')} />}
      {added && (
        <div className="success" role="status">
          <p>
            <Trans
              i18nKey="qqbot.added"
              values={{ name: added.displayName ?? added.id, url: added.webhookUrl }}
              components={{ strong: <strong />, code: <code /> }}
            />
          </p>
        </div>
      )}
    </section>
  );
}

function Account({ a }: { a: QqBotAccountView }) {
  const { t, i18n } = useTranslation();
  const last = a.lastEvent;
  return (
    <li className="card" aria-label={t('qqbot.accountLabel', { id: a.id })}>
      <h3>
        {a.displayName ?? a.id} <span className="muted">· {t('qqbot.app', { appId: a.appId })}</span>
      </h3>
      <dl className="facts">
        <dt>{t('qqbot.webhookUrl')}</dt>
        <dd>
          <code>{a.webhookUrl}</code> <CopyUrl url={a.webhookUrl} />
        </dd>
        <dt>{t('qqbot.configuredIn')}</dt>
        <dd>{a.source === 'file' ? t('qqbot.sourceFile') : t('qqbot.sourceApi')}</dd>
        <dt>{t('qqbot.lastEvent')}</dt>
        <dd>
          {last ? (
            <>
              {t(`qqbot.outcome.${last.outcome}`)}
              {last.type ? ` (${last.type})` : ''} ·{' '}
              <time dateTime={last.at}>{formatDateTime(last.at, i18n.language === 'zh' ? 'zh' : 'en')}</time>
              {last.error ? ` · ${last.error}` : ''}
            </>
          ) : (
            t('qqbot.noEvent')
          )}
        </dd>
        <dt>{t('qqbot.requests')}</dt>
        <dd>{t('qqbot.counters', a.counters)}</dd>
      </dl>
      <RemoveAccount a={a} />
    </li>
  );
}

/** The QQ Bot accounts the host serves: each one's webhook URL to register on the platform, and its last event. */
export default function QqBotPage() {
  const { t } = useTranslation();
  const accounts = useQuery({
    queryKey: ['qqbot-accounts'],
    queryFn: () => call<QqBotAccountListResponse>(ADMIN_ROUTES.listQqBotAccounts),
    refetchInterval: 5000,
  });
  return (
    <section aria-labelledby="qqbot-title">
      <h1 id="qqbot-title">{t('qqbot.title')}</h1>
      {accounts.error ? <ErrorNotice error={accounts.error} /> : null}
      {accounts.data && accounts.data.accounts.length === 0 ? <p>{t('qqbot.none')}</p> : null}
      <ul className="cards">
        {accounts.data?.accounts.map((a) => (
          <Account key={a.id} a={a} />
        ))}
      </ul>
      <AddAccountPanel />
    </section>
  );
}
