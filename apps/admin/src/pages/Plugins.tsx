import { ADMIN_ROUTES, type PluginListResponse, type PluginSummary } from '@host/admin-api';
import { useQuery } from '@tanstack/react-query';
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
  return (
    <li className="plugin card" data-plugin-id={p.pluginId}>
      <div className="card-head">
        <h3>
          <Link to={`/plugins/${encodeURIComponent(p.pluginId)}`}>{p.name ?? p.pluginId}</Link>
        </h3>
        <span className="muted">
          <code>{p.pluginId}</code> {p.version && <>· {p.version}</>} {p.author && <>· by {p.author}</>} ·{' '}
          {p.transport === 'http' ? 'HTTP' : 'stdio'}
        </span>
      </div>
      <StateBadge plugin={p} />
      {p.queue && (p.queue.waiting > 0 || p.queue.expired > 0) && (
        <p className={p.queue.expired > 0 ? 'warning' : 'muted'}>
          {p.queue.waiting} waiting
          {p.queue.oldestWaitMilliseconds !== null && ` (oldest ${Math.round(p.queue.oldestWaitMilliseconds / 1000)} s)`}
          {p.queue.expired > 0 && ` · ${p.queue.expired} expired`}
        </p>
      )}
      {p.description && <p>{p.description}</p>}
      <details>
        <summary>
          Permissions ({p.permissions?.length ?? 0}) and commands ({p.commands?.length ?? 0})
        </summary>
        <h4>Permissions</h4>
        <PermissionList permissions={p.permissions ?? []} />
        <h4>Commands</h4>
        <CommandList commands={p.commands ?? []} />
        {p.commandConflicts?.map((c, i) => (
          <p key={i} className="warning">
            {c.prefix}
            {c.word} is answered by {c.otherPluginId} too; {c.winner} gets it first.
          </p>
        ))}
      </details>
      <PluginActions plugin={p} />
    </li>
  );
}

export function PluginsPage() {
  const plugins = usePlugins();
  const list = plugins.data?.plugins ?? [];
  return (
    <>
      <h1>v2 plugins</h1>
      <section aria-labelledby="list-title">
        <h2 id="list-title">Installed and registered ({list.length})</h2>
        {plugins.isPending && <p role="status">Loading plugins…</p>}
        {plugins.error && <ErrorNotice error={plugins.error} />}
        {plugins.isSuccess && list.length === 0 && <p>No plugins yet. Install a ZIP or register an HTTP plugin below.</p>}
        <ul className="plugins">
          {list.map((p) => (
            <PluginCard key={p.pluginId} plugin={p} />
          ))}
        </ul>
      </section>
      <div className="panels">
        <InstallPanel />
        <RegisterHttpPanel />
      </div>
    </>
  );
}
