import { ADMIN_ROUTES, type EventListResponse, type PluginDetail, type PluginResponse } from '@host/admin-api';
import { useQuery } from '@tanstack/react-query';
import type { TFunction } from 'i18next';
import { useTranslation } from 'react-i18next';
import { Link, useParams } from 'react-router';
import { call } from '../api';
import { ErrorNotice } from '../components/ErrorNotice';
import { BackupList } from '../components/BackupList';
import { CommandList, Facts, PermissionList } from '../components/Facts';
import { LogView } from '../components/LogView';
import { PluginActions } from '../components/PluginActions';
import { SettingsForm } from '../components/SettingsForm';
import { StateBadge } from '../components/StateBadge';
import { formatDateTime } from '../i18n';

function ms(v: number | null | undefined, t: TFunction): string {
  return v === null || v === undefined ? '—' : t('units.ms', { value: v < 10 ? v.toFixed(1) : Math.round(v) });
}

/** How long ago an instant was, in whole seconds or minutes. */
function age(iso: string, t: TFunction): string {
  const s = Math.max(0, Math.round((Date.now() - Date.parse(iso)) / 1000));
  return s < 120 ? t('units.seconds', { value: s }) : t('units.minutes', { value: Math.round(s / 60) });
}

/** The plugin's event queue on this host: handling, waiting (and the oldest wait), expired and dropped. */
function QueueFacts({ queue }: { queue: PluginDetail['queue'] }) {
  const { t } = useTranslation();
  if (!queue) return null;
  const oldest =
    queue.oldestWaitMilliseconds === null ? '' : t('detail.queue.oldest', { seconds: Math.round(queue.oldestWaitMilliseconds / 1000) });
  return (
    <Facts
      rows={[
        [t('detail.queue.active'), queue.active],
        [t('detail.queue.waiting'), `${queue.waiting}${oldest}`],
        [
          t('detail.queue.expired'),
          queue.expired === 0 ? '0' : <span className="warning">{t('detail.queue.expiredText', { n: queue.expired })}</span>,
        ],
        [t('detail.queue.dropped'), queue.dropped],
      ]}
    />
  );
}

function Deliveries({ pluginId }: { pluginId: string }) {
  const { t, i18n } = useTranslation();
  const lng = i18n.language === 'zh' ? 'zh' : 'en';
  const q = useQuery({
    queryKey: ['plugin', pluginId, 'events'],
    queryFn: () => call<EventListResponse>(ADMIN_ROUTES.listEvents, { query: { pluginId, limit: '20' } }),
    refetchInterval: 3000,
  });
  if (q.error) return <ErrorNotice error={q.error} />;
  const rows = (q.data?.events ?? []).flatMap((e) =>
    e.deliveries
      .filter((d) => d.pluginId === pluginId)
      .map((d) => ({ e, d, replies: e.outbound.filter((o) => o.pluginId === pluginId).length })),
  );
  if (rows.length === 0) return <p className="muted">{t('detail.deliveries.none')}</p>;
  return (
    <div className="table-scroll">
      <table>
        <thead>
          <tr>
            <th scope="col">{t('detail.deliveries.received')}</th>
            <th scope="col">{t('detail.deliveries.text')}</th>
            <th scope="col">{t('detail.deliveries.command')}</th>
            <th scope="col">{t('detail.deliveries.decision')}</th>
            <th scope="col">{t('detail.deliveries.outcome')}</th>
            <th scope="col">{t('detail.deliveries.time')}</th>
            <th scope="col">{t('detail.deliveries.replies')}</th>
          </tr>
        </thead>
        <tbody>
          {rows.map(({ e, d, replies }) => (
            <tr key={e.eventId}>
              <td>{formatDateTime(e.receivedAt, lng)}</td>
              <td>
                <span className="clip" title={e.event.message?.content ?? ''}>
                  {e.event.message?.content ?? ''}
                </span>
              </td>
              <td>{d.command ? <code>{d.command.name}</code> : <span className="muted">{t('detail.deliveries.observed')}</span>}</td>
              <td>
                {d.error
                  ? t('detail.deliveries.refused', { code: d.error.code })
                  : d.accepted
                    ? t(d.intercepted ? 'detail.deliveries.acceptedIntercepted' : 'detail.deliveries.accepted')
                    : t(`detail.deliveryState.${d.state}`, { defaultValue: d.state })}
              </td>
              <td>
                {d.state === 'queued'
                  ? t('detail.deliveries.queuedFor', { age: age(d.startedAt, t) })
                  : t(`detail.deliveryState.${d.state}`, { defaultValue: d.state })}
                {d.completion?.error ? `: ${d.completion.error.code} ${d.completion.error.message}` : ''}
              </td>
              <td>{ms(d.completion?.durationMs ?? d.durationMs, t)}</td>
              <td>{replies}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

export function PluginDetailPage() {
  const { t, i18n } = useTranslation();
  const lng = i18n.language === 'zh' ? 'zh' : 'en';
  const when = (at: string | undefined) => formatDateTime(at, lng);
  const { pluginId = '' } = useParams();
  const q = useQuery({
    queryKey: ['plugin', pluginId],
    queryFn: () => call<PluginResponse>(ADMIN_ROUTES.getPlugin, { params: { pluginId } }),
    refetchInterval: 3000,
  });
  if (q.isPending) return <p role="status">{t('common.loading')}</p>;
  if (q.error)
    return (
      <>
        <p>
          <Link to="/plugins">{t('detail.back')}</Link>
        </p>
        <ErrorNotice error={q.error} />
      </>
    );
  const p = q.data.plugin;
  const r = p.runtime;
  const limit = r?.lastExitLimit ? t(r.lastExitLimit === 'cpu' ? 'detail.runtime.overCpu' : 'detail.runtime.overMemory') : '';
  return (
    <>
      <p>
        <Link to="/plugins">{t('detail.back')}</Link>
      </p>
      <h1>{p.name ?? p.pluginId}</h1>
      <p className="muted">
        <code>{p.pluginId}</code> {p.version && `· ${p.version}`} {p.author && `· ${t('plugins.byAuthor', { author: p.author })}`} ·{' '}
        {t(p.transport === 'http' ? 'transport.http' : 'transport.stdio')}
      </p>
      <StateBadge plugin={p} />
      {p.description && <p>{p.description}</p>}
      <PluginActions plugin={p} />
      <div className="columns">
        <section aria-labelledby="runtime-title">
          <h2 id="runtime-title">{t('detail.runtime.title')}</h2>
          <QueueFacts queue={p.queue} />
          <Facts
            rows={
              p.transport === 'http'
                ? [
                    [t('detail.runtime.baseUrl'), p.baseUrl ?? '—'],
                    [t('detail.runtime.health'), r?.health ? t(`detail.health.${r.health}`) : '—'],
                    [t('detail.runtime.lastError'), r?.lastError ?? '—'],
                  ]
                : [
                    [t('detail.runtime.pid'), r?.pid ?? '—'],
                    // What the plugin can reach: its own user, a sandbox, its network and limits (security.md, "Isolation modes").
                    [t('detail.runtime.isolation'), r?.isolation?.summary ?? '—'],
                    [t('detail.runtime.started'), when(r?.startedAt)],
                    [
                      t('detail.runtime.lastExit'),
                      r?.lastExitAt
                        ? t('detail.runtime.lastExitText', {
                            at: when(r.lastExitAt),
                            code: r.lastExitCode ?? '—',
                            signal: r.lastExitSignal ?? '—',
                            limit,
                          })
                        : '—',
                    ],
                    [t('detail.runtime.crashes'), r?.crashCount ?? 0],
                    [t('detail.runtime.nextRestart'), when(r?.nextRestartAt)],
                    [t('detail.runtime.lastError'), r?.lastError ?? '—'],
                    [t('detail.runtime.sha256'), p.packageSha256 ? <code className="clip">{p.packageSha256}</code> : '—'],
                  ]
            }
          />
        </section>
        <section aria-labelledby="perm-title">
          <h2 id="perm-title">{t('plugins.permissions')}</h2>
          <PermissionList permissions={p.permissions ?? []} />
          <h2>{t('plugins.commands')}</h2>
          <CommandList commands={p.commands ?? []} />
        </section>
      </div>
      <section aria-labelledby="logs-title">
        <h2 id="logs-title">{t('detail.log')}</h2>
        <LogView pluginId={p.pluginId} transport={p.transport} />
      </section>
      <section aria-labelledby="deliveries-title">
        <h2 id="deliveries-title">{t('detail.deliveries.title')}</h2>
        <Deliveries pluginId={p.pluginId} />
      </section>
      <section aria-labelledby="settings-title">
        <h2 id="settings-title">{t('detail.settings')}</h2>
        <SettingsForm pluginId={p.pluginId} />
      </section>
      {p.transport !== 'http' && (
        <section aria-labelledby="backups-title">
          <h2 id="backups-title">{t('detail.backups.title')}</h2>
          <BackupList pluginId={p.pluginId} backups={p.backups} />
        </section>
      )}
    </>
  );
}
