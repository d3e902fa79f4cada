import { ADMIN_ROUTES, type PluginSummary, type RefreshHttpPluginResponse } from '@host/admin-api';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useId, useState } from 'react';
import { call } from '../api';
import { Dialog } from './Dialog';
import { ErrorNotice } from './ErrorNotice';

type Action = 'start' | 'stop' | 'restart' | 'uninstall' | 'deleteData' | 'refresh';

/** Lifecycle actions of one plugin; uninstall, delete data and refresh ask first. */
export function PluginActions({ plugin }: { plugin: PluginSummary }) {
  const queryClient = useQueryClient();
  const [confirming, setConfirming] = useState<'uninstall' | 'deleteData'>();
  const [typed, setTyped] = useState('');
  const [message, setMessage] = useState<string>();
  const [refresh, setRefresh] = useState<RefreshHttpPluginResponse>();
  const typedId = useId();
  const id = plugin.pluginId;
  const http = plugin.transport === 'http';
  const running = ['running', 'starting', 'restartPending'].includes(plugin.state);

  const m = useMutation({
    mutationFn: async (a: Action | { confirmRefresh: string }) => {
      if (typeof a === 'object')
        return call<RefreshHttpPluginResponse>(ADMIN_ROUTES.confirmHttpRefresh, {
          params: { pluginId: id },
          body: { sha256: a.confirmRefresh },
        });
      const route = {
        start: ADMIN_ROUTES.startPlugin,
        stop: ADMIN_ROUTES.stopPlugin,
        restart: ADMIN_ROUTES.restartPlugin,
        uninstall: ADMIN_ROUTES.uninstallPlugin,
        deleteData: ADMIN_ROUTES.deletePluginData,
        refresh: ADMIN_ROUTES.refreshHttpPlugin,
      }[a];
      return call<unknown>(route, { params: { pluginId: id } });
    },
    onSuccess: (r, a) => {
      setConfirming(undefined);
      setTyped('');
      if (a === 'uninstall') setMessage(`Uninstalled ${id}; its data and settings are kept.`);
      else if (a === 'deleteData') setMessage(`Deleted the data, settings and cache of ${id}.`);
      else if (a === 'refresh' || typeof a === 'object') {
        const x = r as RefreshHttpPluginResponse;
        if (x.confirmationRequired) setRefresh(x);
        else {
          setRefresh(undefined);
          setMessage(
            x.changed
              ? `Manifest refreshed: version ${x.previousVersion} → ${x.plugin.version}.`
              : `Manifest unchanged (version ${x.plugin.version}).`,
          );
        }
      } else setMessage(undefined);
      void queryClient.invalidateQueries({ queryKey: ['plugins'] });
      void queryClient.invalidateQueries({ queryKey: ['plugin', id] });
    },
    onError: () => void queryClient.invalidateQueries({ queryKey: ['plugins'] }),
  });

  const busy = m.isPending;
  return (
    <div className="actions">
      <div className="buttons" role="group" aria-label={`Actions for ${id}`}>
        {plugin.state !== 'invalidManifest' && (
          <>
            {!running && (
              <button type="button" disabled={busy} onClick={() => m.mutate('start')}>
                {http ? 'Enable' : 'Start'}
              </button>
            )}
            {running && (
              <button type="button" className="secondary" disabled={busy} onClick={() => m.mutate('stop')}>
                {http ? 'Disable' : 'Stop'}
              </button>
            )}
            {running && !http && (
              <button type="button" className="secondary" disabled={busy} onClick={() => m.mutate('restart')}>
                Restart
              </button>
            )}
            {http && (
              <button type="button" className="secondary" disabled={busy} onClick={() => m.mutate('refresh')}>
                Refresh manifest
              </button>
            )}
          </>
        )}
        <button type="button" className="secondary" disabled={busy} onClick={() => setConfirming('uninstall')}>
          {http ? 'Unregister' : 'Uninstall'}
        </button>
        <button type="button" className="danger" disabled={busy} onClick={() => setConfirming('deleteData')}>
          Delete data…
        </button>
      </div>
      {busy && <p role="status">Working…</p>}
      {m.error && !confirming && <ErrorNotice error={m.error} />}
      {message && <p role="status">{message}</p>}
      {confirming === 'uninstall' && (
        <Dialog open title={`${http ? 'Unregister' : 'Uninstall'} ${id}?`} onClose={() => setConfirming(undefined)}>
          <p>
            {http
              ? 'The host stops sending it events and forgets its signing secret.'
              : 'The host stops it if it runs and moves its package to the backups.'}{' '}
            Its data and settings are kept; installing it again finds them.
          </p>
          {m.error && <ErrorNotice error={m.error} />}
          <div className="buttons">
            <button type="button" className="secondary" onClick={() => setConfirming(undefined)}>
              Cancel
            </button>
            <button type="button" disabled={busy} onClick={() => m.mutate('uninstall')}>
              {http ? 'Unregister' : 'Uninstall'}
            </button>
          </div>
        </Dialog>
      )}
      {confirming === 'deleteData' && (
        <Dialog open title={`Delete the data of ${id}?`} onClose={() => setConfirming(undefined)}>
          <p>This deletes its data, settings (secrets included) and cache for good. A running plugin must be stopped first.</p>
          <label htmlFor={typedId}>
            Type <code>{id}</code> to confirm
          </label>
          <input id={typedId} value={typed} onChange={(e) => setTyped(e.target.value)} autoComplete="off" spellCheck={false} />
          {m.error && <ErrorNotice error={m.error} />}
          <div className="buttons">
            <button type="button" className="secondary" onClick={() => setConfirming(undefined)}>
              Cancel
            </button>
            <button type="button" className="danger" disabled={busy || typed !== id} onClick={() => m.mutate('deleteData')}>
              Delete data
            </button>
          </div>
        </Dialog>
      )}
      {refresh?.confirmationRequired && refresh.incoming && (
        <Dialog open title={`Accept the new manifest of ${id}?`} onClose={() => setRefresh(undefined)}>
          <p>
            The service now offers version {refresh.incoming.manifest.version} (stored: {refresh.previousVersion}), which asks for more than
            before. Nothing changes until you accept.
          </p>
          <ul className="changes">
            {refresh.changes.permissionsAdded.length > 0 && <li>Permissions added: {refresh.changes.permissionsAdded.join(', ')}</li>}
            {refresh.changes.commandsAdded.length > 0 && <li>Commands added: {refresh.changes.commandsAdded.join(', ')}</li>}
            {(refresh.changes.capabilitiesAdded ?? []).length > 0 && (
              <li>Capabilities added: {refresh.changes.capabilitiesAdded!.join(', ')}</li>
            )}
            {(refresh.changes.subscriptionsAdded ?? []).length > 0 && (
              <li>Subscriptions added: {refresh.changes.subscriptionsAdded!.join(', ')}</li>
            )}
          </ul>
          <div className="buttons">
            <button type="button" className="secondary" onClick={() => setRefresh(undefined)}>
              Keep the stored manifest
            </button>
            <button type="button" disabled={busy} onClick={() => m.mutate({ confirmRefresh: refresh.incoming!.sha256 })}>
              Accept version {refresh.incoming.manifest.version}
            </button>
          </div>
        </Dialog>
      )}
    </div>
  );
}
