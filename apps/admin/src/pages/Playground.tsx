import { ADMIN_ROUTES, type ConsoleMessageResponse } from '@host/admin-api';
import { useId, useRef, useState, type FormEvent } from 'react';
import { useTranslation } from 'react-i18next';
import { call } from '../api';
import { ErrorNotice } from '../components/ErrorNotice';
import { ProviderMessage } from '../components/ProviderMessage';

interface Turn {
  n: number;
  conversation: string;
  sender: string;
  text: string;
  /**
   * The display names known when this message was sent: its replies show
   * mentions with these, so a later change of name leaves the history as it was.
   */
  names: Readonly<Record<string, string>>;
  tookMs?: number;
  answer?: ConsoleMessageResponse;
  error?: unknown;
}

function Reply({
  o,
  answer,
  names,
}: {
  o: ConsoleMessageResponse['outbound'][number];
  answer: ConsoleMessageResponse;
  names: Readonly<Record<string, string>>;
}) {
  const { t } = useTranslation();
  const d = answer.deliveries.find((x) => x.pluginId === o.pluginId);
  return (
    <li className="bubble bot">
      <p className="who">
        <strong>{o.pluginId}</strong>
        {d?.completion?.durationMs != null && (
          <span className="muted"> · {t('playground.handledIn', { ms: Math.round(d.completion.durationMs) })}</span>
        )}
      </p>
      <ProviderMessage body={o.body} names={names} />
      <details>
        <summary>{t('playground.raw')}</summary>
        <pre className="raw" tabIndex={0}>
          {JSON.stringify(o.body, null, 2)}
        </pre>
      </details>
    </li>
  );
}

/** Chat as a user of the console provider and see what plugins answer, as QQ Bot would show it. */
export default function PlaygroundPage() {
  const { t } = useTranslation();
  const [turns, setTurns] = useState<Turn[]>([]);
  const [type, setType] = useState<'group' | 'c2c'>('group');
  const [busy, setBusy] = useState(false);
  const counter = useRef(0);
  // Display names of the users this playground spoke as, for mention chips.
  const [names, setNames] = useState<Record<string, string>>({});
  const ids = { type: useId(), conv: useId(), sender: useId(), name: useId(), text: useId() };

  async function send(e: FormEvent<HTMLFormElement>) {
    e.preventDefault();
    const form = e.currentTarget;
    const f = new FormData(form);
    const text = String(f.get('text') ?? '');
    const conversation = { type, id: String(f.get('conversation') ?? '').trim() || (type === 'group' ? 'group-1' : 'user-1') };
    const sender = {
      id: String(f.get('sender') ?? '').trim() || 'user-1',
      displayName: String(f.get('displayName') ?? '').trim() || undefined,
    };
    const known = sender.displayName ? { ...names, [sender.id]: sender.displayName } : names;
    if (sender.displayName) setNames(known);
    const turn: Turn = {
      n: ++counter.current,
      conversation: `${type}:${conversation.id}`,
      sender: sender.displayName ?? sender.id,
      text,
      names: known,
    };
    setTurns((t) => [...t, turn]);
    setBusy(true);
    const started = performance.now();
    try {
      const answer = await call<ConsoleMessageResponse>(ADMIN_ROUTES.sendConsoleMessage, {
        body: { conversation, sender, text },
      });
      turn.answer = answer;
    } catch (err) {
      turn.error = err;
    }
    turn.tookMs = Math.round(performance.now() - started);
    setTurns((t) => t.map((x) => (x.n === turn.n ? { ...turn } : x)));
    setBusy(false);
    (form.elements.namedItem('text') as HTMLTextAreaElement).value = '';
  }

  return (
    <>
      <h1>{t('playground.title')}</h1>
      <p>{t('playground.intro')}</p>
      <form className="playground-form" onSubmit={(e) => void send(e)}>
        <fieldset>
          <legend>{t('playground.conversation')}</legend>
          <div className="row">
            <div>
              <label htmlFor={ids.type}>{t('playground.type')}</label>
              <select id={ids.type} value={type} onChange={(e) => setType(e.target.value as 'group' | 'c2c')}>
                <option value="group">{t('playground.group')}</option>
                <option value="c2c">{t('playground.c2c')}</option>
              </select>
            </div>
            <div>
              <label htmlFor={ids.conv}>{t('playground.conversationId')}</label>
              <input id={ids.conv} name="conversation" placeholder={type === 'group' ? 'group-1' : 'user-1'} />
            </div>
            <div>
              <label htmlFor={ids.sender}>{t('playground.userId')}</label>
              <input id={ids.sender} name="sender" placeholder="user-1" />
            </div>
            <div>
              <label htmlFor={ids.name}>{t('playground.displayName')}</label>
              <input id={ids.name} name="displayName" placeholder={t('playground.noDisplayName')} />
            </div>
          </div>
        </fieldset>
        <label htmlFor={ids.text}>{t('playground.message')}</label>
        <div className="row">
          <textarea
            id={ids.text}
            name="text"
            rows={2}
            required
            maxLength={4000}
            placeholder={t('playground.messagePlaceholder')}
            onKeyDown={(e) => {
              if (e.key === 'Enter' && !e.shiftKey) {
                e.preventDefault();
                e.currentTarget.form?.requestSubmit();
              }
            }}
          />
          <button type="submit" disabled={busy}>
            {t('playground.send')}
          </button>
        </div>
      </form>
      <ol className="transcript" aria-live="polite" aria-label={t('playground.transcript')}>
        {turns.map((turn) => (
          <li key={turn.n} className="turn">
            <ol>
              <li className="bubble me">
                <p className="who">
                  <strong>{turn.sender}</strong> <span className="muted">{t('playground.in', { conversation: turn.conversation })}</span>
                </p>
                <p className="provider-text">{turn.text}</p>
              </li>
              {turn.error !== undefined && (
                <li>
                  <ErrorNotice error={turn.error} title={t('playground.notDelivered')} />
                </li>
              )}
              {turn.answer && (
                <>
                  {turn.answer.outbound.map((o, i) => (
                    <Reply key={i} o={o} answer={turn.answer!} names={turn.names} />
                  ))}
                  {turn.answer.refused.map((r, i) => (
                    <li key={`r${i}`} className="bubble refused">
                      <p className="who">
                        <strong>{r.pluginId}</strong>: {t('playground.replyRefused')}
                      </p>
                      <p>
                        <code>{r.error.code}</code> <span lang="en">{r.error.message}</span>
                      </p>
                    </li>
                  ))}
                  <li className="meta">
                    {turn.answer.deliveries.length === 0
                      ? t('playground.noTaker')
                      : t('playground.deliveredTo', {
                          list: turn.answer.deliveries
                            .map((d) => `${d.pluginId} (${t(`detail.deliveryState.${d.state}`)}${d.error ? `: ${d.error.code}` : ''})`)
                            .join(', '),
                        })}{' '}
                    · {t('playground.answeredIn', { ms: turn.tookMs })}
                  </li>
                </>
              )}
            </ol>
          </li>
        ))}
      </ol>
    </>
  );
}
