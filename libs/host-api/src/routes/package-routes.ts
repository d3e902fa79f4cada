import { ADMIN_ROUTES, type InstallResponse } from '@host/admin-api';
import { HostError, type RegistryStore } from '@host/host-core';
import { packageWarnings, zipFolder, type PluginInstaller } from '@host/host-installer';
import { PLUGIN_ID_PATTERN } from '@host/protocol';
import multer from 'multer';
import { mkdirSync, rmSync } from 'node:fs';
import type { RequestHandler } from 'express';
import { join, relative } from 'node:path';
import { pluginDetail, type ViewDeps } from '../plugin-view';
import { implementRoute, type RouteDef } from '@host/host-routes';
import { declaredUploadSize } from '../declared-upload-size';
import { uploadSlots } from '../upload-slots';

export interface PackageRouteDeps extends ViewDeps {
  store: RegistryStore;
  installer: PluginInstaller;
  maxUploadBytes: number;
  /** Uploads received and checked at once (default DEFAULT_MAX_CONCURRENT_UPLOADS); more answer 503 INSTALL_UPLOADS_BUSY. */
  maxConcurrentUploads?: number;
}

export function packageRoutes(deps: PackageRouteDeps): RouteDef<unknown, unknown>[] {
  // The upload streams to a file (bounded by maxUploadBytes), never through memory piece by piece into one buffer;
  // the installer then hashes, checks, keeps and unpacks it from that file in ranges, never holding it whole.
  // Files a host killed during an upload left behind go when the next one starts.
  const uploadsDir = join(deps.paths.stateDir, 'uploads');
  rmSync(uploadsDir, { recursive: true, force: true });
  mkdirSync(uploadsDir, { recursive: true, mode: 0o700 });
  const upload = multer({
    storage: multer.diskStorage({ destination: uploadsDir }),
    limits: { fileSize: deps.maxUploadBytes, files: 1, fields: 8, parts: 9, fieldSize: 1024 },
  }).single('package');
  const result = async (r: Awaited<ReturnType<PluginInstaller['install']>>): Promise<InstallResponse> => {
    const warnings = packageWarnings(r.record.manifest);
    return {
      ...(await answer(r)),
      ...(warnings.length > 0 ? { warnings } : {}),
    };
  };
  const answer = async (r: Awaited<ReturnType<PluginInstaller['install']>>): Promise<InstallResponse> => ({
    plugin: await pluginDetail(deps, r.record.pluginId, await deps.store.get(r.record.pluginId), await deps.store.list()),
    started: r.started,
    ...(r.startError ? { startError: r.startError } : {}),
    ...(r.backup ? { backup: relative(deps.paths.dataDir, r.backup) } : {}),
  });
  return [
    implementRoute(
      ADMIN_ROUTES.uploadPackage,
      async ({ req, body }) => {
        const file = (req as { file?: { path: string } }).file;
        if (!file) throw new HostError('INSTALL_NO_FILE');
        const r = await deps.installer.install({ file: file.path }, { startAfterInstall: body.startAfterInstall === 'true' });
        return { status: 201, body: await result(r) };
      },
      { before: [declaredUploadSize(deps.maxUploadBytes), uploadSlots(deps.maxConcurrentUploads), upload, removeUploadWhenAnswered] },
    ),
    implementRoute(ADMIN_ROUTES.getPendingUpdate, async ({ params }) => ({
      body: { pendingUpdate: await deps.installer.getPendingUpdate(params['id']!) },
    })),
    implementRoute(ADMIN_ROUTES.confirmUpdate, async ({ params, body }) => ({
      body: await result(await deps.installer.confirmUpdate(params['id']!, body)),
    })),
    implementRoute(ADMIN_ROUTES.restoreBackup, async ({ params }) => {
      const pluginId = params['pluginId']!;
      if (!PLUGIN_ID_PATTERN.test(pluginId)) throw new HostError('PLUGIN_NOT_FOUND', undefined, { pluginId });
      // Only a name the installer lists: a name is never joined to a path as sent.
      const backup = (await deps.installer.backups(pluginId)).find((b) => b.name === params['name']);
      if (!backup) throw new HostError('BACKUP_NOT_FOUND', undefined, { pluginId, name: params['name'] });
      const r = await deps.installer.install(await zipFolder(backup.path), { startAfterInstall: false });
      return { status: 201, body: await result(r) };
    }),
    implementRoute(ADMIN_ROUTES.cancelUpdate, async ({ params }) => {
      await deps.installer.cancelUpdate(params['id']!);
      return { body: { cancelled: params['id'] } };
    }),
  ];
}

/**
 * Removes the received upload's file once the request is answered, whatever the answer (a field the route
 * refuses, a failed install, a client gone): refused uploads leave nothing behind.
 */
const removeUploadWhenAnswered: RequestHandler = (req, res, next) => {
  const file = (req as { file?: { path: string } }).file;
  if (file) {
    let removed = false;
    const remove = () => {
      if (removed) return;
      removed = true;
      rmSync(file.path, { force: true });
    };
    res.once('finish', remove);
    res.once('close', remove);
  }
  next();
};
