import {
  ADMIN_ROUTES,
  type PendingUpdate,
  type PendingUpdateResponse,
  type PluginHealth,
  type StatsAlert,
  type StatsResponse,
} from '@host/admin-api';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Link } from 'react-router';
import { call } from '../api';
import { ErrorNotice } from '../components/ErrorNotice';
import { LineChart } from '../components/LineChart';
import { StateBadge } from '../components/StateBadge';
import { UpdateDialog } from '../components/UpdateDialog';
import { formatDateTime, formatTimeOfDay } from '../i18n';

/** How often the dashboard asks the host again: a few seconds, well inside a 10 s bucket. */
const POLL_MILLISECONDS = 3000;

/** Events per second of each bucket; the current one by the seconds it has run so far. */
function eventsPerSecond(s: StatsResponse): number[] {
  const now = Date.parse(s.generatedAt);
  return s.buckets.map((b, i) => {
    const seconds = i === s.buckets.length - 1 ? Math.min(s.bucketSeconds, Math.max(1, (now - Date.parse(b.at)) / 1000)) : s.bucketSeconds;
    return b.eventsIn / seconds;
  });
}

/** A pending update is handled here: its dialog, the one an upload opens, confirms or cancels it. */
function ReviewUpdate({ id }: { id: string }) {
  const { t } = useTranslation();
  const queryClient = useQueryClient();
  const [pending, setPending] = useState<PendingUpdate>();
  const [error, setError] = useState<unknown>();
  async function open() {
    setError(undefined);
    try {
      setPending((await call<PendingUpdateResponse>(ADMIN_ROUTES.getPendingUpdate, { params: { id } })).pendingUpdate);
    } catch (e) {
      setError(e);
    }
  }
  return (
    <>
      <button type="button" className="secondary" onClick={() => void open()}>
        {t('dashboard.alertAction.updatePending')}
      </button>
      {error ? <ErrorNotice error={error} /> : null}
      {pending && (
        <UpdateDialog
          pending={pending}
          onDone={() => {
            setPending(undefined);
            void queryClient.invalidateQueries({ queryKey: ['stats'] });
            void queryClient.invalidateQueries({ queryKey: ['plugins'] });
          }}
        />
      )}
    </>
  );
}

function AlertItem({ alert }: { alert: StatsAlert }) {
  const { t } = useTranslation();
  return (
    <li className={`alert-item alert-${alert.kind}`} data-alert={alert.kind} data-plugin-id={alert.pluginId}>
      <span>{t(`dashboard.alert.${alert.kind}`, { pluginId: alert.pluginId, detail: alert.detail ?? '' })}</span>{' '}
      {alert.kind === 'updatePending' && alert.pendingUpdateId ? (
        <ReviewUpdate id={alert.pendingUpdateId} />
      ) : (
        <Link to={`/plugins/${encodeURIComponent(alert.pluginId)}`}>{t(`dashboard.alertAction.${alert.kind}`)}</Link>
      )}
    </li>
  );
}

function HealthRow({ p }: { p: PluginHealth }) {
  const { t } = useTranslation();
  const q = p.queue;
  return (
    <tr data-plugin-id={p.pluginId}>
      <th scope="row">
        <Link to={`/plugins/${encodeURIComponent(p.pluginId)}`}>{p.name ?? p.pluginId}</Link>
      </th>
      <td>
        <StateBadge
          plugin={{
            state: p.state,
            transport: p.transport,
            enabled: true,
            ...(p.health ? { runtime: { state: p.state, crashCount: 0, health: p.health } } : {}),
          }}
        />
      </td>
      <td>
        {p.errorRate === null
          ? t('dashboard.noDeliveries')
          : t('dashboard.errorRate', { rate: Math.round(p.errorRate * 1000) / 10, failed: p.failed + p.expired, total: p.deliveries })}
      </td>
      <td>{q ? t('dashboard.backlog', { waiting: q.waiting, active: q.active }) : t('dashboard.noQueue')}</td>
      <td>
        {p.lastError ? (
          <>
            <code>{p.lastError.code}</code> <span className="hint">{formatDateTime(p.lastError.at)}</span>
          </>
        ) : (
          t('dashboard.none')
        )}
      </td>
    </tr>
  );
}

export default function DashboardPage() {
  const { t } = useTranslation();
  const stats = useQuery({
    queryKey: ['stats'],
    queryFn: () => call<StatsResponse>(ADMIN_ROUTES.stats),
    refetchInterval: POLL_MILLISECONDS,
  });
  const s = stats.data;
  if (!s) {
    return (
      <section aria-labelledby="dashboard-title">
        <h1 id="dashboard-title">{t('dashboard.title')}</h1>
        {stats.error ? <ErrorNotice error={stats.error} /> : <p role="status">{t('common.loading')}</p>}
      </section>
    );
  }
  const rates = eventsPerSecond(s);
  const from = formatTimeOfDay(s.buckets[0]!.at).slice(0, 5);
  const to = formatTimeOfDay(s.generatedAt).slice(0, 5);
  const totalIn = s.buckets.reduce((n, b) => n + b.eventsIn, 0);
  const totalFailed = s.buckets.reduce((n, b) => n + b.failed + b.expired, 0);
  const last = [...s.buckets].reverse().find((b) => b.p99Milliseconds !== null);
  const rateNow = rates.at(-1) ?? 0;
  return (
    <section aria-labelledby="dashboard-title" className="dashboard">
      <h1 id="dashboard-title">{t('dashboard.title')}</h1>
      {stats.error ? <ErrorNotice error={stats.error} /> : null}
      <section aria-labelledby="alerts-title" className="panel">
        <h2 id="alerts-title">{t('dashboard.alertsTitle')}</h2>
        {s.alerts.length === 0 ? (
          <p>{t('dashboard.noAlerts')}</p>
        ) : (
          <ul className="alerts">
            {s.alerts.map((a) => (
              <AlertItem key={`${a.kind}:${a.pluginId}:${a.pendingUpdateId ?? ''}`} alert={a} />
            ))}
          </ul>
        )}
      </section>
      <p className="dashboard-totals" data-testid="dashboard-totals">
        {t('dashboard.totals', { events: totalIn, failed: totalFailed, rate: rateNow.toFixed(1) })}
      </p>
      <div className="charts">
        <LineChart
          testId="chart-events"
          title={t('dashboard.eventsChart')}
          summary={t('dashboard.eventsSummary', { events: totalIn, rate: rateNow.toFixed(1) })}
          series={[{ label: t('dashboard.eventsPerSecond'), values: rates, tone: 'a' }]}
          formatValue={(v) => t('dashboard.perSecond', { value: v })}
          from={from}
          to={to}
        />
        <LineChart
          testId="chart-latency"
          title={t('dashboard.latencyChart')}
          summary={
            last
              ? t('dashboard.latencySummary', { p50: Math.round(last.p50Milliseconds ?? 0), p99: Math.round(last.p99Milliseconds ?? 0) })
              : t('dashboard.latencyNone')
          }
          series={[
            { label: t('dashboard.p50'), values: s.buckets.map((b) => b.p50Milliseconds), tone: 'a' },
            { label: t('dashboard.p99'), values: s.buckets.map((b) => b.p99Milliseconds), tone: 'b' },
          ]}
          formatValue={(v) => t('units.ms', { value: Math.round(v) })}
          from={from}
          to={to}
        />
      </div>
      <section aria-labelledby="health-title" className="panel">
        <h2 id="health-title">{t('dashboard.healthTitle')}</h2>
        {s.plugins.length === 0 ? (
          <p>
            {t('dashboard.noPlugins')} <Link to="/plugins">{t('dashboard.installLink')}</Link>
          </p>
        ) : (
          <div className="table-scroll">
            <table className="health">
              <thead>
                <tr>
                  <th scope="col">{t('dashboard.col.plugin')}</th>
                  <th scope="col">{t('dashboard.col.state')}</th>
                  <th scope="col">{t('dashboard.col.errorRate')}</th>
                  <th scope="col">{t('dashboard.col.backlog')}</th>
                  <th scope="col">{t('dashboard.col.lastError')}</th>
                </tr>
              </thead>
              <tbody>
                {s.plugins.map((p) => (
                  <HealthRow key={p.pluginId} p={p} />
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>
    </section>
  );
}
