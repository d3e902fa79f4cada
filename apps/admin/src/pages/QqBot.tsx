import { ADMIN_ROUTES, type QqBotAccountListResponse, type QqBotAccountView } from '@host/admin-api';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useId, useState, type FormEvent } from 'react';
import { call } from '../api';
import { Dialog } from '../components/Dialog';
import { ErrorNotice } from '../components/ErrorNotice';

const OUTCOMES: Record<NonNullable<QqBotAccountView['lastEvent']>['outcome'], string> = {
  validated: 'callback URL validated',
  dispatched: 'message dispatched to plugins',
  deferred: 'not taken: the host was at its bound of waiting events; the platform pushes it again',
  unsupported: 'event type not supported (logged, acknowledged)',
  refused: 'request refused',
};

function CopyUrl({ url }: { url: string }) {
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
      {copied ? 'Copied' : 'Copy webhook URL'}
    </button>
  );
}

/** Removal of an account added through the admin API, after a confirmation dialog. */
function RemoveAccount({ a }: { a: QqBotAccountView }) {
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
    return <p className="hint">Read-only here: remove it from the accounts file and restart the host.</p>;
  }
  return (
    <>
      <div className="buttons">
        <button type="button" className="secondary" onClick={() => setConfirming(true)}>
          Remove account
        </button>
      </div>
      {confirming && (
        <Dialog open title={`Remove QQ Bot account ${a.id}?`} onClose={() => setConfirming(false)}>
          <p>
            The host forgets its app id and secret. Its webhook URL answers 404 from then on, so the platform&apos;s events for this bot
            stop arriving, and plugins can no longer reply or send through it. Adding it again gives the same webhook URL.
          </p>
          {error !== undefined && <ErrorNotice error={error} title="Not removed" />}
          <div className="buttons">
            <button type="button" className="secondary" onClick={() => setConfirming(false)}>
              Cancel
            </button>
            <button type="button" disabled={busy} onClick={() => void remove()}>
              Remove {a.id}
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
  const queryClient = useQueryClient();
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  const [added, setAdded] = useState<QqBotAccountView>();
  const ids = { id: useId(), appId: useId(), secret: useId(), name: useId(), api: useId(), token: useId() };

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
      <h2 id="qqbot-add-title">Add QQ Bot account</h2>
      <form onSubmit={(e) => void submit(e)} className="inline-form" autoComplete="off">
        <div>
          <label htmlFor={ids.id}>Account id (ends the webhook URL)</label>
          <input id={ids.id} name="id" required placeholder="main" />
        </div>
        <div>
          <label htmlFor={ids.appId}>AppID</label>
          <input id={ids.appId} name="appId" required placeholder="102030405" />
        </div>
        <div>
          <label htmlFor={ids.secret}>AppSecret</label>
          <input id={ids.secret} name="secret" type="password" required autoComplete="new-password" spellCheck={false} />
        </div>
        <div>
          <label htmlFor={ids.name}>Display name (optional)</label>
          <input id={ids.name} name="displayName" maxLength={64} />
        </div>
        <details>
          <summary>Platform addresses (for a sandbox, a proxy or a local fake)</summary>
          <div>
            <label htmlFor={ids.api}>OpenAPI base URL</label>
            <input id={ids.api} name="apiBaseUrl" type="url" placeholder="https://api.sgroup.qq.com" />
          </div>
          <div>
            <label htmlFor={ids.token}>Access token URL</label>
            <input id={ids.token} name="tokenUrl" type="url" placeholder="https://bots.qq.com/app/getAppAccessToken" />
          </div>
        </details>
        <button type="submit" disabled={busy}>
          Add account
        </button>
      </form>
      <p className="hint">
        AppID and AppSecret are on the bot&apos;s development settings page of the QQ Bot Open Platform. The secret is stored in the data
        directory (readable by the host user only) and never shown again.
      </p>
      {error !== undefined && <ErrorNotice error={error} title="Not added" />}
      {added && (
        <div className="success" role="status">
          <p>
            Added <strong>{added.displayName ?? added.id}</strong>. Register its webhook URL <code>{added.webhookUrl}</code> as the callback
            URL on the platform, which then validates it: the account below shows the validation as its last event.
          </p>
        </div>
      )}
    </section>
  );
}

function Account({ a }: { a: QqBotAccountView }) {
  const last = a.lastEvent;
  return (
    <li className="card" aria-label={`QQ Bot account ${a.id}`}>
      <h3>
        {a.displayName ?? a.id} <span className="muted">· app {a.appId}</span>
      </h3>
      <dl className="facts">
        <dt>Webhook URL</dt>
        <dd>
          <code>{a.webhookUrl}</code> <CopyUrl url={a.webhookUrl} />
        </dd>
        <dt>Configured in</dt>
        <dd>{a.source === 'file' ? 'the accounts file (HOST_QQBOT_ACCOUNTS_FILE)' : 'the admin API'}</dd>
        <dt>Last event</dt>
        <dd>
          {last ? (
            <>
              {OUTCOMES[last.outcome]}
              {last.type ? ` (${last.type})` : ''} at <time dateTime={last.at}>{new Date(last.at).toLocaleString()}</time>
              {last.error ? ` · ${last.error}` : ''}
            </>
          ) : (
            'none yet: register the webhook URL on the platform, which then validates it'
          )}
        </dd>
        <dt>Requests</dt>
        <dd>
          {a.counters.received} received, {a.counters.dispatched} dispatched, {a.counters.deferred} deferred (host busy),{' '}
          {a.counters.refused} refused, {a.counters.unsupported} unsupported
        </dd>
      </dl>
      <RemoveAccount a={a} />
    </li>
  );
}

/** The QQ Bot accounts the host serves: each one's webhook URL to register on the platform, and its last event. */
export default function QqBotPage() {
  const accounts = useQuery({
    queryKey: ['qqbot-accounts'],
    queryFn: () => call<QqBotAccountListResponse>(ADMIN_ROUTES.listQqBotAccounts),
    refetchInterval: 5000,
  });
  return (
    <section aria-labelledby="qqbot-title">
      <h1 id="qqbot-title">QQ Bot accounts</h1>
      {accounts.error ? <ErrorNotice error={accounts.error} /> : null}
      {accounts.data && accounts.data.accounts.length === 0 ? (
        <p>
          No QQ Bot account is configured, so only the console provider (the playground) brings messages. Add an account below (or with
          HOST_QQBOT_ACCOUNTS_FILE, see docs/operator/qqbot.md), then register its webhook URL on the platform.
        </p>
      ) : null}
      <ul className="cards">
        {accounts.data?.accounts.map((a) => (
          <Account key={a.id} a={a} />
        ))}
      </ul>
      <AddAccountPanel />
    </section>
  );
}
