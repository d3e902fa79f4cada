import { ADMIN_ROUTES, type QqBotAccountListResponse, type QqBotAccountView } from '@host/admin-api';
import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { call } from '../api';
import { ErrorNotice } from '../components/ErrorNotice';

const OUTCOMES: Record<NonNullable<QqBotAccountView['lastEvent']>['outcome'], string> = {
  validated: 'callback URL validated',
  dispatched: 'message dispatched to plugins',
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
          {a.counters.received} received, {a.counters.dispatched} dispatched, {a.counters.refused} refused, {a.counters.unsupported}{' '}
          unsupported
        </dd>
      </dl>
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
          No QQ Bot account is configured, so only the console provider (the playground) brings messages. Add an account with
          HOST_QQBOT_ACCOUNTS_FILE or POST /api/qqbot/accounts (docs/operator/qqbot.md), then register its webhook URL on the platform.
        </p>
      ) : null}
      <ul className="cards">
        {accounts.data?.accounts.map((a) => (
          <Account key={a.id} a={a} />
        ))}
      </ul>
    </section>
  );
}
