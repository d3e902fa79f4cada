import { ADMIN_ROUTES, type ConsoleMessageResponse } from '@host/admin-api';
import { useId, useRef, useState, type FormEvent } from 'react';
import { call } from '../api';
import { ErrorNotice } from '../components/ErrorNotice';
import { ProviderMessage } from '../components/ProviderMessage';

interface Turn {
  n: number;
  conversation: string;
  sender: string;
  text: string;
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
  const d = answer.deliveries.find((x) => x.pluginId === o.pluginId);
  return (
    <li className="bubble bot">
      <p className="who">
        <strong>{o.pluginId}</strong>
        {d?.completion?.durationMs != null && <span className="muted"> · handled in {Math.round(d.completion.durationMs)} ms</span>}
      </p>
      <ProviderMessage body={o.body} names={names} />
      <details>
        <summary>Raw provider body</summary>
        <pre className="raw" tabIndex={0}>
          {JSON.stringify(o.body, null, 2)}
        </pre>
      </details>
    </li>
  );
}

/** Chat as a user of the console provider and see what plugins answer, as QQ Bot would show it. */
export default function PlaygroundPage() {
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
    if (sender.displayName) setNames((n) => ({ ...n, [sender.id]: sender.displayName! }));
    const turn: Turn = { n: ++counter.current, conversation: `${type}:${conversation.id}`, sender: sender.displayName ?? sender.id, text };
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
      <h1>Playground</h1>
      <p>
        Chat as a user of the built-in console provider. Replies show as QQ Bot would show them; open &quot;Raw provider body&quot; for the
        exact request body.
      </p>
      <form className="playground-form" onSubmit={(e) => void send(e)}>
        <fieldset>
          <legend>Conversation</legend>
          <div className="row">
            <div>
              <label htmlFor={ids.type}>Type</label>
              <select id={ids.type} value={type} onChange={(e) => setType(e.target.value as 'group' | 'c2c')}>
                <option value="group">Group</option>
                <option value="c2c">One-to-one</option>
              </select>
            </div>
            <div>
              <label htmlFor={ids.conv}>Conversation id</label>
              <input id={ids.conv} name="conversation" placeholder={type === 'group' ? 'group-1' : 'user-1'} />
            </div>
            <div>
              <label htmlFor={ids.sender}>Your user id</label>
              <input id={ids.sender} name="sender" placeholder="user-1" />
            </div>
            <div>
              <label htmlFor={ids.name}>Display name</label>
              <input id={ids.name} name="displayName" placeholder="(none)" />
            </div>
          </div>
        </fieldset>
        <label htmlFor={ids.text}>Message</label>
        <div className="row">
          <textarea
            id={ids.text}
            name="text"
            rows={2}
            required
            maxLength={4000}
            placeholder="/echo hello"
            onKeyDown={(e) => {
              if (e.key === 'Enter' && !e.shiftKey) {
                e.preventDefault();
                e.currentTarget.form?.requestSubmit();
              }
            }}
          />
          <button type="submit" disabled={busy}>
            Send
          </button>
        </div>
      </form>
      <ol className="transcript" aria-live="polite" aria-label="Conversation">
        {turns.map((t) => (
          <li key={t.n} className="turn">
            <ol>
              <li className="bubble me">
                <p className="who">
                  <strong>{t.sender}</strong> <span className="muted">in {t.conversation}</span>
                </p>
                <p className="provider-text">{t.text}</p>
              </li>
              {t.error !== undefined && (
                <li>
                  <ErrorNotice error={t.error} title="Not delivered" />
                </li>
              )}
              {t.answer && (
                <>
                  {t.answer.outbound.map((o, i) => (
                    <Reply key={i} o={o} answer={t.answer!} names={names} />
                  ))}
                  {t.answer.refused.map((r, i) => (
                    <li key={`r${i}`} className="bubble refused">
                      <p className="who">
                        <strong>{r.pluginId}</strong>: a reply was refused
                      </p>
                      <p>
                        <code>{r.error.code}</code> {r.error.message}
                      </p>
                    </li>
                  ))}
                  <li className="meta">
                    {t.answer.deliveries.length === 0
                      ? 'No plugin took this message (no command matched and nobody observes).'
                      : `Delivered to ${t.answer.deliveries.map((d) => `${d.pluginId} (${d.state}${d.error ? `: ${d.error.code}` : ''})`).join(', ')}`}{' '}
                    · answered in {t.tookMs} ms
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
