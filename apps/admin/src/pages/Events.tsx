import { ADMIN_ROUTES, DELIVERY_STATES, type ConsoleStreamData, type EventRecordSummary } from '@host/admin-api';
import { Fragment, useEffect, useId, useMemo, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Link } from 'react-router';
import { apiPath } from '../api';
import { EventLogLines, EventLogsError, useEventLogs } from '../components/EventLogLines';
import { ProviderMessage } from '../components/ProviderMessage';
import { formatTimeOfDay } from '../i18n';

/** Events kept in the page, newest first; older ones are in GET /api/events and the plugin pages. */
const MAX_EVENTS = 200;
/** Records the stream replays when it (re)connects. */
const HISTORY = 50;

type Outcome = (typeof DELIVERY_STATES)[number];

/** Upserts a record by eventId, newest first, bounded. */
function upsert(list: EventRecordSummary[], record: EventRecordSummary): EventRecordSummary[] {
  const i = list.findIndex((r) => r.eventId === record.eventId);
  if (i >= 0) return list.map((r, j) => (j === i ? record : r));
  const next = [record, ...list];
  next.sort((a, b) => b.receivedAt.localeCompare(a.receivedAt));
  return next.length > MAX_EVENTS ? next.slice(0, MAX_EVENTS) : next;
}

function EventItem({ r }: { r: EventRecordSummary }) {
  const { t } = useTranslation();
  const [open, setOpen] = useState(false);
  const states = r.deliveries.map((d) => `${d.pluginId}: ${t(`detail.deliveryState.${d.state}`, { defaultValue: d.state })}`);
  // Read again whenever the record moves on: a handler writes its lines until its delivery completes.
  const version = `${r.completedAt ?? ''}|${r.outbound.length}|${states.join(',')}`;
  const logs = useEventLogs(r.eventId, open, version);
  return (
    <li className="event-item" data-event-id={r.eventId}>
      <details onToggle={(e) => setOpen(e.currentTarget.open)}>
        <summary>
          <time dateTime={r.receivedAt}>{formatTimeOfDay(r.receivedAt)}</time> <span className="hint">{r.source}</span>{' '}
          <span className="event-text">{r.event.message.content}</span>{' '}
          <span className="hint">{states.length ? states.join(', ') : t('events.noRecipients')}</span>
        </summary>
        <h3>{t('events.deliveries')}</h3>
        {r.deliveries.length === 0 ? (
          <p>{t('events.noRecipients')}</p>
        ) : (
          <table className="health">
            <thead>
              <tr>
                <th scope="col">{t('dashboard.col.plugin')}</th>
                <th scope="col">{t('events.outcome')}</th>
                <th scope="col">{t('events.error')}</th>
                <th scope="col">{t('events.duration')}</th>
              </tr>
            </thead>
            <tbody>
              {r.deliveries.map((d) => {
                const error = d.completion?.error ?? d.error;
                const ms = d.completion?.durationMs ?? d.durationMs;
                return (
                  <Fragment key={d.pluginId}>
                    <tr>
                      <th scope="row">
                        <Link to={`/plugins/${encodeURIComponent(d.pluginId)}`}>{d.pluginId}</Link>
                      </th>
                      <td>{t(`detail.deliveryState.${d.state}`, { defaultValue: d.state })}</td>
                      <td>{error ? <code>{error.code}</code> : t('dashboard.none')}</td>
                      <td>{ms === null ? t('dashboard.none') : t('units.ms', { value: Math.round(ms) })}</td>
                    </tr>
                    {open ? (
                      <tr className="event-log-row">
                        <td colSpan={4}>
                          <p className="hint">{t('events.logs.heading', { pluginId: d.pluginId })}</p>
                          {logs.isError ? (
                            <EventLogsError error={logs.error} />
                          ) : (
                            <EventLogLines logs={logs.data?.plugins.find((p) => p.pluginId === d.pluginId)} loading={logs.isPending} />
                          )}
                        </td>
                      </tr>
                    ) : null}
                  </Fragment>
                );
              })}
            </tbody>
          </table>
        )}
        <h3>{t('events.replies')}</h3>
        {r.outbound.length === 0 ? (
          <p>{t('events.noReplies')}</p>
        ) : (
          <ul className="event-replies">
            {r.outbound.map((o, i) => (
              <li key={i}>
                <p className="hint">
                  {t('events.replyBy', { pluginId: o.pluginId, kind: o.kind })} {o.error ? <code>{o.error.code}</code> : null}
                </p>
                <ProviderMessage body={o.body} />
              </li>
            ))}
          </ul>
        )}
      </details>
    </li>
  );
}

export default function EventsPage() {
  const { t } = useTranslation();
  const [records, setRecords] = useState<EventRecordSummary[]>([]);
  const [frozen, setFrozen] = useState<EventRecordSummary[] | null>(null);
  const [connection, setConnection] = useState<'connecting' | 'live' | 'retrying'>('connecting');
  const [plugin, setPlugin] = useState('');
  const [outcome, setOutcome] = useState<Outcome | ''>('');
  const [text, setText] = useState('');
  const pluginId = useId();
  const outcomeId = useId();
  const textId = useId();

  useEffect(() => {
    const source = new EventSource(apiPath(ADMIN_ROUTES.consoleEvents, {}, { history: String(HISTORY) }));
    source.onopen = () => setConnection('live');
    source.onerror = () => setConnection('retrying');
    const onRecord = (e: Event) => {
      const data = JSON.parse((e as MessageEvent<string>).data) as ConsoleStreamData;
      if ('record' in data) setRecords((list) => upsert(list, data.record));
    };
    for (const type of ['event', 'delivery', 'outbound', 'routed', 'completed']) source.addEventListener(type, onRecord);
    return () => source.close();
  }, []);

  const shown = frozen ?? records;
  const plugins = useMemo(() => [...new Set(records.flatMap((r) => r.deliveries.map((d) => d.pluginId)))].sort(), [records]);
  const visible = useMemo(() => {
    const needle = text.trim().toLowerCase();
    return shown.filter(
      (r) =>
        (!plugin || r.deliveries.some((d) => d.pluginId === plugin && (!outcome || d.state === outcome))) &&
        (plugin || !outcome || r.deliveries.some((d) => d.state === outcome)) &&
        (!needle || r.event.message.content.toLowerCase().includes(needle) || r.eventId.toLowerCase().includes(needle)),
    );
  }, [shown, plugin, outcome, text]);
  const waiting = frozen ? records.filter((r) => !frozen.some((f) => f.eventId === r.eventId)).length : 0;

  return (
    <section aria-labelledby="events-title">
      <h1 id="events-title">{t('events.title')}</h1>
      <p role="status" className="hint">
        {t(`events.connection.${connection}`)}
        {frozen ? ` ${t('events.pausedCount', { count: waiting })}` : ''}
      </p>
      <div className="log-controls">
        <div>
          <label htmlFor={pluginId}>{t('events.plugin')}</label>
          <select id={pluginId} value={plugin} onChange={(e) => setPlugin(e.target.value)}>
            <option value="">{t('events.any')}</option>
            {plugins.map((p) => (
              <option key={p} value={p}>
                {p}
              </option>
            ))}
          </select>
        </div>
        <div>
          <label htmlFor={outcomeId}>{t('events.outcome')}</label>
          <select id={outcomeId} value={outcome} onChange={(e) => setOutcome(e.target.value as Outcome | '')}>
            <option value="">{t('events.any')}</option>
            {DELIVERY_STATES.map((s) => (
              <option key={s} value={s}>
                {t(`detail.deliveryState.${s}`)}
              </option>
            ))}
          </select>
        </div>
        <div>
          <label htmlFor={textId}>{t('events.text')}</label>
          <input id={textId} type="search" value={text} onChange={(e) => setText(e.target.value)} />
        </div>
        <button type="button" className="secondary" aria-pressed={frozen !== null} onClick={() => setFrozen(frozen ? null : records)}>
          {frozen ? t('events.resume') : t('events.pause')}
        </button>
      </div>
      <p className="hint">{t('events.count', { shown: visible.length, total: shown.length })}</p>
      <ul className="events">
        {visible.map((r) => (
          <EventItem key={r.eventId} r={r} />
        ))}
      </ul>
    </section>
  );
}
