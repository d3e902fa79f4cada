import { ADMIN_ROUTES, type ConsoleChatEventRequest, type ConsoleMessageResponse } from '@host/admin-api';
import { useId, useRef, useState, type FormEvent } from 'react';
import { useTranslation } from 'react-i18next';
import { call } from '../api';
import { ErrorNotice } from '../components/ErrorNotice';
import { ProviderMessage, type ButtonPress } from '../components/ProviderMessage';

/** The events other than a message the playground can send for its conversation (a click is sent by a button). */
const CONVERSATION_EVENTS = ['bot.added', 'bot.removed', 'conversation.opened'] as const;
type ConversationEvent = (typeof CONVERSATION_EVENTS)[number];
/** Their names' keys (i18next reads a dot as a path). */
const EVENT_KEY = { 'bot.added': 'botAdded', 'bot.removed': 'botRemoved', 'conversation.opened': 'conversationOpened' } as const;

interface Conversation {
  type: 'group' | 'c2c';
  id: string;
}
interface Sender {
  id: string;
  displayName?: string;
}

interface Turn {
  n: number;
  conversation: Conversation;
  sender: string;
  /** What the user did: a message's text, or the event sent. */
  said: { kind: 'text'; text: string } | { kind: 'click'; label: string } | { kind: 'event'; eventType: ConversationEvent };
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
  onPress,
}: {
  o: ConsoleMessageResponse['outbound'][number];
  answer: ConsoleMessageResponse;
  names: Readonly<Record<string, string>>;
  onPress: (press: ButtonPress) => void;
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
      <ProviderMessage body={o.body} names={names} onPress={onPress} />
      <details>
        <summary>{t('playground.raw')}</summary>
        <pre className="raw" tabIndex={0}>
          {JSON.stringify(o.body, null, 2)}
        </pre>
      </details>
    </li>
  );
}

/**
 * Chat as a user of the console provider and see what plugins answer, as QQ Bot would show it: click the
 * buttons of their keyboards (a callback button sends interaction.created to the plugins subscribed to it), and
 * send the bot's own events for the conversation.
 */
export default function PlaygroundPage() {
  const { t } = useTranslation();
  const [turns, setTurns] = useState<Turn[]>([]);
  const [type, setType] = useState<'group' | 'c2c'>('group');
  const [busy, setBusy] = useState(false);
  const [eventType, setEventType] = useState<ConversationEvent>('bot.added');
  const counter = useRef(0);
  const formRef = useRef<HTMLFormElement>(null);
  // Display names of the users this playground spoke as, for mention chips.
  const [names, setNames] = useState<Record<string, string>>({});
  const ids = { type: useId(), conv: useId(), sender: useId(), name: useId(), text: useId(), event: useId() };

  /** The conversation and the user the form names now. */
  function who(form: HTMLFormElement): { conversation: Conversation; sender: Sender } {
    const f = new FormData(form);
    return {
      conversation: { type, id: String(f.get('conversation') ?? '').trim() || (type === 'group' ? 'group-1' : 'user-1') },
      sender: {
        id: String(f.get('sender') ?? '').trim() || 'user-1',
        displayName: String(f.get('displayName') ?? '').trim() || undefined,
      },
    };
  }

  /** Adds a turn, sends it, and shows the answer in it. */
  async function run(
    conversation: Conversation,
    sender: Sender,
    said: Turn['said'],
    request: () => Promise<ConsoleMessageResponse>,
  ): Promise<void> {
    const known = sender.displayName ? { ...names, [sender.id]: sender.displayName } : names;
    if (sender.displayName) setNames(known);
    const turn: Turn = { n: ++counter.current, conversation, sender: sender.displayName ?? sender.id, said, names: known };
    setTurns((t) => [...t, turn]);
    setBusy(true);
    const started = performance.now();
    try {
      turn.answer = await request();
    } catch (err) {
      turn.error = err;
    }
    turn.tookMs = Math.round(performance.now() - started);
    setTurns((t) => t.map((x) => (x.n === turn.n ? { ...turn } : x)));
    setBusy(false);
  }

  async function sendText(form: HTMLFormElement, text: string) {
    const { conversation, sender } = who(form);
    await run(conversation, sender, { kind: 'text', text }, () =>
      call<ConsoleMessageResponse>(ADMIN_ROUTES.sendConsoleMessage, { body: { conversation, sender, text } }),
    );
  }

  async function send(e: FormEvent<HTMLFormElement>) {
    e.preventDefault();
    const form = e.currentTarget;
    await sendText(form, String(new FormData(form).get('text') ?? ''));
    (form.elements.namedItem('text') as HTMLTextAreaElement).value = '';
  }

  function sendChatEvent(conversation: Conversation, sender: Sender, said: Turn['said'], body: ConsoleChatEventRequest) {
    return run(conversation, sender, said, () => call<ConsoleMessageResponse>(ADMIN_ROUTES.sendConsoleChatEvent, { body }));
  }

  /**
   * A button of a reply in `turn`'s conversation, clicked by the user the form names now: a callback button sends
   * interaction.created; a command button puts its text in the message box, and sends it when the button says so.
   */
  function press(turn: Turn, p: ButtonPress, messageId: string | undefined) {
    const form = formRef.current;
    if (!form) return;
    const { sender } = who(form);
    if (p.kind === 'callback') {
      void sendChatEvent(
        turn.conversation,
        sender,
        { kind: 'click', label: p.label },
        {
          eventType: 'interaction.created',
          conversation: turn.conversation,
          sender,
          interaction: { data: p.data, ...(p.buttonId ? { buttonId: p.buttonId } : {}), ...(messageId ? { messageId } : {}) },
        },
      );
      return;
    }
    const box = form.elements.namedItem('text') as HTMLTextAreaElement;
    box.value = p.text;
    if (p.send) form.requestSubmit();
    else box.focus();
  }

  function sendEvent() {
    const form = formRef.current;
    if (!form) return;
    const { conversation, sender } = who(form);
    void sendChatEvent(conversation, sender, { kind: 'event', eventType }, { eventType, conversation, sender });
  }

  return (
    <>
      <h1>{t('playground.title')}</h1>
      <p>{t('playground.intro')}</p>
      <form className="playground-form" ref={formRef} onSubmit={(e) => void send(e)}>
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
        <div className="row playground-events">
          <label htmlFor={ids.event}>{t('playground.event')}</label>
          <select id={ids.event} value={eventType} onChange={(e) => setEventType(e.target.value as ConversationEvent)}>
            {CONVERSATION_EVENTS.map((x) => (
              <option key={x} value={x}>
                {t(`playground.events.${EVENT_KEY[x]}`)}
              </option>
            ))}
          </select>
          <button type="button" className="secondary" disabled={busy} onClick={sendEvent}>
            {t('playground.sendEvent')}
          </button>
        </div>
      </form>
      <ol className="transcript" aria-live="polite" aria-label={t('playground.transcript')}>
        {turns.map((turn) => (
          <li key={turn.n} className="turn">
            <ol>
              <li className="bubble me">
                <p className="who">
                  <strong>{turn.sender}</strong>{' '}
                  <span className="muted">{t('playground.in', { conversation: `${turn.conversation.type}:${turn.conversation.id}` })}</span>
                </p>
                {turn.said.kind === 'text' ? (
                  <p className="provider-text">{turn.said.text}</p>
                ) : (
                  <p className="provider-event">
                    {turn.said.kind === 'click'
                      ? t('playground.clicked', { label: turn.said.label })
                      : t(`playground.events.${EVENT_KEY[turn.said.eventType]}`)}
                  </p>
                )}
              </li>
              {turn.error !== undefined && (
                <li>
                  <ErrorNotice error={turn.error} title={t('playground.notDelivered')} />
                </li>
              )}
              {turn.answer && (
                <>
                  {turn.answer.outbound.map((o, i) => (
                    <Reply key={i} o={o} answer={turn.answer!} names={turn.names} onPress={(p) => press(turn, p, o.messageId)} />
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
                      ? t(turn.said.kind === 'text' ? 'playground.noTaker' : 'playground.noSubscriber')
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
