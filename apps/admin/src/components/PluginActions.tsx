import { ADMIN_ROUTES, type PluginSummary, type RefreshHttpPluginResponse } from '@host/admin-api';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useId, useState } from 'react';
import { Trans, useTranslation } from 'react-i18next';
import { call } from '../api';
import { Dialog } from './Dialog';
import { ErrorNotice } from './ErrorNotice';
import { PermissionList } from './Facts';

type Action = 'start' | 'stop' | 'restart' | 'uninstall' | 'deleteData' | 'refresh';

/** Lifecycle actions of one plugin; uninstall, delete data and refresh ask first. */
export function PluginActions({ plugin }: { plugin: PluginSummary }) {
  const { t } = useTranslation();
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
      if (a === 'uninstall') setMessage(t(http ? 'actions.unregistered' : 'actions.uninstalled', { pluginId: id }));
      else if (a === 'deleteData') setMessage(t('actions.dataDeleted', { pluginId: id }));
      else if (a === 'refresh' || typeof a === 'object') {
        const x = r as RefreshHttpPluginResponse;
        if (x.confirmationRequired) setRefresh(x);
        else {
          setRefresh(undefined);
          setMessage(
            x.changed
              ? t('actions.refreshed', { from: x.previousVersion, to: x.plugin.version })
              : t('actions.unchanged', { version: x.plugin.version }),
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
      <div className="buttons" role="group" aria-label={t('actions.group', { pluginId: id })}>
        {plugin.state !== 'invalidManifest' && (
          <>
            {!running && (
              <button type="button" disabled={busy} onClick={() => m.mutate('start')}>
                {http ? t('actions.enable') : t('actions.start')}
              </button>
            )}
            {running && (
              <button type="button" className="secondary" disabled={busy} onClick={() => m.mutate('stop')}>
                {http ? t('actions.disable') : t('actions.stop')}
              </button>
            )}
            {running && !http && (
              <button type="button" className="secondary" disabled={busy} onClick={() => m.mutate('restart')}>
                {t('actions.restart')}
              </button>
            )}
            {http && (
              <button type="button" className="secondary" disabled={busy} onClick={() => m.mutate('refresh')}>
                {t('actions.refresh')}
              </button>
            )}
          </>
        )}
        <button type="button" className="secondary" disabled={busy} onClick={() => setConfirming('uninstall')}>
          {http ? t('actions.unregister') : t('actions.uninstall')}
        </button>
        <button type="button" className="danger" disabled={busy} onClick={() => setConfirming('deleteData')}>
          {t('actions.deleteDataOpen')}
        </button>
      </div>
      {busy && <p role="status">{t('common.working')}</p>}
      {m.error && !confirming && <ErrorNotice error={m.error} />}
      {message && <p role="status">{message}</p>}
      {confirming === 'uninstall' && (
        <Dialog
          open
          title={t(http ? 'actions.unregisterTitle' : 'actions.uninstallTitle', { pluginId: id })}
          onClose={() => setConfirming(undefined)}
        >
          <p>{t(http ? 'actions.unregisterText' : 'actions.uninstallText')}</p>
          {m.error && <ErrorNotice error={m.error} />}
          <div className="buttons">
            <button type="button" className="secondary" onClick={() => setConfirming(undefined)}>
              {t('common.cancel')}
            </button>
            <button type="button" disabled={busy} onClick={() => m.mutate('uninstall')}>
              {http ? t('actions.unregister') : t('actions.uninstall')}
            </button>
          </div>
        </Dialog>
      )}
      {confirming === 'deleteData' && (
        <Dialog open title={t('actions.deleteDataTitle', { pluginId: id })} onClose={() => setConfirming(undefined)}>
          <p>{t('actions.deleteDataText')}</p>
          <label htmlFor={typedId}>
            <Trans i18nKey="actions.typeToConfirm" values={{ pluginId: id }} components={{ code: <code /> }} />
          </label>
          <input id={typedId} value={typed} onChange={(e) => setTyped(e.target.value)} autoComplete="off" spellCheck={false} />
          {m.error && <ErrorNotice error={m.error} />}
          <div className="buttons">
            <button type="button" className="secondary" onClick={() => setConfirming(undefined)}>
              {t('common.cancel')}
            </button>
            <button type="button" className="danger" disabled={busy || typed !== id} onClick={() => m.mutate('deleteData')}>
              {t('actions.deleteData')}
            </button>
          </div>
        </Dialog>
      )}
      {refresh?.confirmationRequired && refresh.incoming && (
        <Dialog open title={t('actions.refreshTitle', { pluginId: id })} onClose={() => setRefresh(undefined)}>
          <p>{t('actions.refreshText', { version: refresh.incoming.manifest.version, stored: refresh.previousVersion })}</p>
          {refresh.changes.permissionsAdded.length > 0 && (
            <div className="changes-permissions">
              <p>{t('update.permissionsAdded')}</p>
              <PermissionList permissions={refresh.changes.permissionsAdded} />
            </div>
          )}
          <ul className="changes">
            {refresh.changes.commandsAdded.length > 0 && (
              <li>{t('update.commandsAdded', { list: refresh.changes.commandsAdded.join(', ') })}</li>
            )}
            {(refresh.changes.capabilitiesAdded ?? []).length > 0 && (
              <li>{t('actions.capabilitiesAdded', { list: refresh.changes.capabilitiesAdded!.join(', ') })}</li>
            )}
            {(refresh.changes.subscriptionsAdded ?? []).length > 0 && (
              <li>{t('actions.subscriptionsAdded', { list: refresh.changes.subscriptionsAdded!.join(', ') })}</li>
            )}
          </ul>
          <div className="buttons">
            <button type="button" className="secondary" onClick={() => setRefresh(undefined)}>
              {t('actions.keepManifest')}
            </button>
            <button type="button" disabled={busy} onClick={() => m.mutate({ confirmRefresh: refresh.incoming!.sha256 })}>
              {t('actions.acceptVersion', { version: refresh.incoming.manifest.version })}
            </button>
          </div>
        </Dialog>
      )}
    </div>
  );
}
