import type { ErrorBody, InstallResponse, PendingUpdate } from '@host/admin-api';
import { useQueryClient } from '@tanstack/react-query';
import { useId, useRef, useState, type DragEvent } from 'react';
import { Trans, useTranslation } from 'react-i18next';
import { ApiError, errorFrom, uploadPackage } from '../api';
import { ErrorNotice } from './ErrorNotice';
import { UpdateDialog } from './UpdateDialog';

type Outcome = { kind: 'installed'; result: InstallResponse; updated: boolean } | { kind: 'cancelled'; pluginId: string };

/** Install a ZIP: drop or pick a file, watch the upload, confirm an update of an installed id. */
export function InstallPanel() {
  const { t } = useTranslation();
  const queryClient = useQueryClient();
  const [file, setFile] = useState<File>();
  const [startAfter, setStartAfter] = useState(true);
  const [progress, setProgress] = useState<number>();
  const [error, setError] = useState<unknown>();
  const [pending, setPending] = useState<PendingUpdate>();
  const [outcome, setOutcome] = useState<Outcome>();
  const [dragging, setDragging] = useState(false);
  const inputRef = useRef<HTMLInputElement>(null);
  const fileId = useId();
  const progressId = useId();

  function choose(f: File | undefined) {
    setFile(f);
    setError(undefined);
    setOutcome(undefined);
    setProgress(undefined);
  }

  function onDrop(e: DragEvent<HTMLDivElement>) {
    e.preventDefault();
    setDragging(false);
    choose(e.dataTransfer.files[0]);
  }

  async function upload() {
    if (!file) return;
    setError(undefined);
    setOutcome(undefined);
    setProgress(0);
    try {
      const { status, body } = await uploadPackage(file, startAfter, setProgress);
      if (status === 201) {
        setOutcome({ kind: 'installed', result: body as InstallResponse, updated: false });
        setFile(undefined);
        if (inputRef.current) inputRef.current.value = '';
      } else if (status === 409 && (body as ErrorBody | undefined)?.pendingUpdate) {
        setPending((body as ErrorBody).pendingUpdate);
      } else {
        setError(errorFrom(status, body));
      }
    } catch (e) {
      setError(e instanceof ApiError ? e : new ApiError(0, 'NETWORK', ''));
    } finally {
      setProgress(undefined);
      void queryClient.invalidateQueries({ queryKey: ['plugins'] });
    }
  }

  const installed = outcome?.kind === 'installed' ? outcome.result : undefined;
  return (
    <section className="panel" aria-labelledby="install-title">
      <h2 id="install-title">{t('install.title')}</h2>
      <div
        className={`drop${dragging ? ' dragging' : ''}`}
        onDragOver={(e) => {
          e.preventDefault();
          setDragging(true);
        }}
        onDragLeave={() => setDragging(false)}
        onDrop={onDrop}
        data-testid="drop-zone"
      >
        <p>{t('install.drop')}</p>
        <label htmlFor={fileId} className="file-label">
          {t('install.choose')}
        </label>
        <input
          id={fileId}
          ref={inputRef}
          type="file"
          accept=".zip,application/zip"
          className="file-input"
          onChange={(e) => choose(e.target.files?.[0])}
        />
        {file && (
          <p>
            <Trans
              i18nKey="install.selected"
              values={{ name: file.name, kib: Math.ceil(file.size / 1024) }}
              components={{ strong: <strong /> }}
            />
          </p>
        )}
      </div>
      <p className="hint">
        <Trans i18nKey="install.hint" components={{ code: <code /> }} />
      </p>
      <label className="check">
        <input type="checkbox" checked={startAfter} onChange={(e) => setStartAfter(e.target.checked)} /> {t('install.startAfter')}
      </label>
      <div className="buttons">
        <button type="button" disabled={!file || progress !== undefined} onClick={() => void upload()}>
          {t('install.submit')}
        </button>
      </div>
      {progress !== undefined && (
        <div className="progress">
          <label htmlFor={progressId}>{t('install.uploading', { percent: Math.round(progress * 100) })}</label>
          <progress id={progressId} max={1} value={progress} />
        </div>
      )}
      {error !== undefined && <ErrorNotice error={error} title={t('install.failed')} />}
      {installed && (
        <div className="success" role="status">
          <p>
            <Trans
              i18nKey={`install.${outcome?.kind === 'installed' && outcome.updated ? 'updated' : 'installed'}${installed.started ? 'Started' : ''}`}
              values={{ name: installed.plugin.name, version: installed.plugin.version, pluginId: installed.plugin.pluginId }}
              components={{ strong: <strong /> }}
            />
          </p>
          {installed.startError && (
            <p>
              {t('install.notStarted')} <code>{installed.startError.code}</code> <span lang="en">{installed.startError.message}</span>
            </p>
          )}
          {installed.warnings?.map((w, i) => (
            <p key={i} className="warning">
              {t('install.warning')} <span lang="en">{w}</span>
            </p>
          ))}
        </div>
      )}
      {outcome?.kind === 'cancelled' && <p role="status">{t('install.cancelled', { pluginId: outcome.pluginId })}</p>}
      {pending && (
        <UpdateDialog
          pending={pending}
          onDone={(r) => {
            setPending(undefined);
            if ('confirmed' in r) {
              setOutcome({ kind: 'installed', result: r.confirmed, updated: true });
              setFile(undefined);
              if (inputRef.current) inputRef.current.value = '';
            } else setOutcome({ kind: 'cancelled', pluginId: pending.pluginId });
            void queryClient.invalidateQueries({ queryKey: ['plugins'] });
          }}
        />
      )}
    </section>
  );
}
