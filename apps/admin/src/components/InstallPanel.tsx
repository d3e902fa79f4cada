import type { ErrorBody, InstallResponse, PendingUpdate } from '@host/admin-api';
import { useQueryClient } from '@tanstack/react-query';
import { useId, useRef, useState, type DragEvent } from 'react';
import { ApiError, errorFrom, uploadPackage } from '../api';
import { ErrorNotice } from './ErrorNotice';
import { UpdateDialog } from './UpdateDialog';

type Outcome = { kind: 'installed'; result: InstallResponse; updated: boolean } | { kind: 'cancelled'; pluginId: string };

/** Install a ZIP: drop or pick a file, watch the upload, confirm an update of an installed id. */
export function InstallPanel() {
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
      setError(e instanceof ApiError ? e : new ApiError(0, 'NETWORK', String(e)));
    } finally {
      setProgress(undefined);
      void queryClient.invalidateQueries({ queryKey: ['plugins'] });
    }
  }

  const installed = outcome?.kind === 'installed' ? outcome.result : undefined;
  return (
    <section className="panel" aria-labelledby="install-title">
      <h2 id="install-title">Install a plugin package (ZIP)</h2>
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
        <p>Drop a plugin ZIP here, or</p>
        <label htmlFor={fileId} className="file-label">
          choose a file
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
            Selected: <strong>{file.name}</strong> ({Math.ceil(file.size / 1024)} KiB)
          </p>
        )}
      </div>
      <p className="hint">
        No package yet? In the host&apos;s folder, <code>npx nx run echo-plugin:pack</code> builds the example plugin to{' '}
        <code>examples/echo-plugin/artifacts/com.example.echo.zip</code>; <code>npx host-plugin pack</code> packs your own.
      </p>
      <label className="check">
        <input type="checkbox" checked={startAfter} onChange={(e) => setStartAfter(e.target.checked)} /> Start after install
      </label>
      <div className="buttons">
        <button type="button" disabled={!file || progress !== undefined} onClick={() => void upload()}>
          Upload and install
        </button>
      </div>
      {progress !== undefined && (
        <div className="progress">
          <label htmlFor={progressId}>Uploading {Math.round(progress * 100)}%</label>
          <progress id={progressId} max={1} value={progress} />
        </div>
      )}
      {error !== undefined && <ErrorNotice error={error} title="Not installed" />}
      {installed && (
        <div className="success" role="status">
          <p>
            {outcome?.kind === 'installed' && outcome.updated ? 'Updated' : 'Installed'} <strong>{installed.plugin.name}</strong>{' '}
            {installed.plugin.version} ({installed.plugin.pluginId}){installed.started ? ' and started it.' : '.'}
          </p>
          {installed.startError && (
            <p>
              It did not start: <code>{installed.startError.code}</code> {installed.startError.message}
            </p>
          )}
          {installed.warnings?.map((w, i) => (
            <p key={i} className="warning">
              Warning: {w}
            </p>
          ))}
        </div>
      )}
      {outcome?.kind === 'cancelled' && (
        <p role="status">The update of {outcome.pluginId} was cancelled; the installed version is unchanged.</p>
      )}
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
