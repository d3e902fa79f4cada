import { ADMIN_ROUTES, type InstallResponse, type PendingUpdate, type PluginDetail } from '@host/admin-api';
import { useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { ApiError, call } from '../api';
import { formatDateTime } from '../i18n';
import { ErrorNotice } from './ErrorNotice';
import { UpdateDialog } from './UpdateDialog';

/**
 * A stdio plugin's kept versions, each with Restore: the host packs the backup
 * and treats it as an upload, so restoring goes through the update dialog
 * (installed and restored side by side) and only happens when confirmed.
 */
export function BackupList({ pluginId, backups }: { pluginId: string; backups: PluginDetail['backups'] }) {
  const { t, i18n } = useTranslation();
  const queryClient = useQueryClient();
  const [busy, setBusy] = useState<string>();
  const [pending, setPending] = useState<PendingUpdate>();
  const [error, setError] = useState<unknown>();
  const [outcome, setOutcome] = useState<{ done: InstallResponse } | { cancelled: true }>();
  const lng = i18n.language === 'zh' ? 'zh' : 'en';

  async function restore(name: string) {
    setBusy(name);
    setError(undefined);
    setOutcome(undefined);
    try {
      setOutcome({ done: await call<InstallResponse>(ADMIN_ROUTES.restoreBackup, { params: { pluginId, name } }) });
    } catch (e) {
      // An installed plugin: the restore waits for the operator in the update dialog.
      if (e instanceof ApiError && e.code === 'UPDATE_CONFIRMATION_REQUIRED' && e.body?.pendingUpdate) setPending(e.body.pendingUpdate);
      else setError(e);
    } finally {
      setBusy(undefined);
      void queryClient.invalidateQueries({ queryKey: ['plugin', pluginId] });
    }
  }

  if (backups.length === 0) return <p className="muted">{t('detail.backups.none')}</p>;
  return (
    <>
      <ul className="backups">
        {backups.map((b) => (
          <li key={b.name}>
            {t('detail.backups.item', { version: b.version, at: formatDateTime(b.createdAt, lng) })}{' '}
            <span className="muted">({b.name})</span>{' '}
            <button
              type="button"
              className="secondary"
              disabled={busy !== undefined}
              aria-label={t('detail.backups.restoreLabel', { version: b.version, name: b.name })}
              onClick={() => void restore(b.name)}
            >
              {t('detail.backups.restore')}
            </button>
          </li>
        ))}
      </ul>
      {error !== undefined && <ErrorNotice error={error} title={t('detail.backups.failed')} />}
      {outcome && 'done' in outcome && (
        <p role="status" className="success">
          {t('detail.backups.restored', { version: outcome.done.plugin.version, pluginId })}
        </p>
      )}
      {outcome && 'cancelled' in outcome && <p role="status">{t('detail.backups.cancelled')}</p>}
      {pending && (
        <UpdateDialog
          pending={pending}
          onDone={(r) => {
            setPending(undefined);
            setOutcome('confirmed' in r ? { done: r.confirmed } : { cancelled: true });
            void queryClient.invalidateQueries({ queryKey: ['plugin', pluginId] });
            void queryClient.invalidateQueries({ queryKey: ['plugins'] });
          }}
        />
      )}
    </>
  );
}
