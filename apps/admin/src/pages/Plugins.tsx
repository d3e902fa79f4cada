import { ADMIN_ROUTES, type PluginListResponse, type PluginSummary } from '@host/admin-api';
import { useQuery } from '@tanstack/react-query';
import { useTranslation } from 'react-i18next';
import { Link } from 'react-router';
import { call } from '../api';
import { ErrorNotice } from '../components/ErrorNotice';
import { CommandList, PermissionList } from '../components/Facts';
import { InstallPanel } from '../components/InstallPanel';
import { PluginActions } from '../components/PluginActions';
import { RegisterHttpPanel } from '../components/RegisterHttpPanel';
import { StateBadge } from '../components/StateBadge';

export function usePlugins() {
  return useQuery({
    queryKey: ['plugins'],
    queryFn: () => call<PluginListResponse>(ADMIN_ROUTES.listPlugins),
    // States change on their own (crashes, restarts, health): keep the tab current.
    refetchInterval: 3000,
  });
}

function PluginCard({ plugin: p }: { plugin: PluginSummary }) {
  const { t } = useTranslation();
  return (
    <li className="plugin card" data-plugin-id={p.pluginId}>
      <div className="card-head">
        <h3>
          <Link to={`/plugins/${encodeURIComponent(p.pluginId)}`}>{p.name ?? p.pluginId}</Link>
        </h3>
        <span className="muted">
          <code>{p.pluginId}</code> {p.version && <>· {p.version}</>} {p.author && <>· {t('plugins.byAuthor', { author: p.author })}</>} ·{' '}
          {t(p.transport === 'http' ? 'transport.http' : 'transport.stdio')}
        </span>
      </div>
      <StateBadge plugin={p} />
      {p.queue && (p.queue.waiting > 0 || p.queue.expired > 0) && (
        <p className={p.queue.expired > 0 ? 'warning' : 'muted'}>
          {t('plugins.queue.waiting', { n: p.queue.waiting })}
          {p.queue.oldestWaitMilliseconds !== null &&
            t('plugins.queue.oldest', { seconds: Math.round(p.queue.oldestWaitMilliseconds / 1000) })}
          {p.queue.expired > 0 && t('plugins.queue.expired', { n: p.queue.expired })}
        </p>
      )}
      {p.description && <p>{p.description}</p>}
      <details>
        <summary>{t('plugins.summary', { permissions: p.permissions?.length ?? 0, commands: p.commands?.length ?? 0 })}</summary>
        <h4>{t('plugins.permissions')}</h4>
        <PermissionList permissions={p.permissions ?? []} />
        <h4>{t('plugins.commands')}</h4>
        <CommandList commands={p.commands ?? []} />
        {p.commandConflicts?.map((c, i) => (
          <p key={i} className="warning">
            {t('plugins.conflict', { command: `${c.prefix}${c.word}`, other: c.otherPluginId, winner: c.winner })}
          </p>
        ))}
      </details>
      <PluginActions plugin={p} />
    </li>
  );
}

/**
 * The plugins tab: installing and registering come first, where they stay in
 * sight however long the list grows; the list follows.
 */
export function PluginsPage() {
  const { t } = useTranslation();
  const plugins = usePlugins();
  const list = plugins.data?.plugins ?? [];
  return (
    <>
      <h1>{t('plugins.title')}</h1>
      <div className="panels">
        <InstallPanel />
        <RegisterHttpPanel />
      </div>
      <section aria-labelledby="list-title">
        <h2 id="list-title">{t('plugins.listTitle', { n: list.length })}</h2>
        {plugins.isPending && <p role="status">{t('plugins.loading')}</p>}
        {plugins.error && <ErrorNotice error={plugins.error} />}
        {plugins.isSuccess && list.length === 0 && <p>{t('plugins.empty')}</p>}
        <ul className="plugins">
          {list.map((p) => (
            <PluginCard key={p.pluginId} plugin={p} />
          ))}
        </ul>
      </section>
    </>
  );
}
