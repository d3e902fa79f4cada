import { ADMIN_ROUTES, type InstallResponse } from '@host/admin-api';
import { HostError, type RegistryStore } from '@host/host-core';
import { packageWarnings, type PluginInstaller } from '@host/host-installer';
import multer from 'multer';
import { relative } from 'node:path';
import { pluginDetail, type ViewDeps } from '../plugin-view';
import { implementRoute, type RouteDef } from '@host/host-core';
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
  // The archive is held in memory (bounded by maxUploadBytes): it is hashed, checked and unpacked from one buffer.
  const upload = multer({
    storage: multer.memoryStorage(),
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
        const file = (req as { file?: { buffer: Buffer } }).file;
        if (!file) throw new HostError('INSTALL_NO_FILE');
        const r = await deps.installer.install(file.buffer, { startAfterInstall: body.startAfterInstall === 'true' });
        return { status: 201, body: await result(r) };
      },
      { before: [declaredUploadSize(deps.maxUploadBytes), uploadSlots(deps.maxConcurrentUploads), upload] },
    ),
    implementRoute(ADMIN_ROUTES.getPendingUpdate, async ({ params }) => ({
      body: { pendingUpdate: await deps.installer.getPendingUpdate(params['id']!) },
    })),
    implementRoute(ADMIN_ROUTES.confirmUpdate, async ({ params, body }) => ({
      body: await result(await deps.installer.confirmUpdate(params['id']!, body)),
    })),
    implementRoute(ADMIN_ROUTES.cancelUpdate, async ({ params }) => {
      await deps.installer.cancelUpdate(params['id']!);
      return { body: { cancelled: params['id'] } };
    }),
  ];
}
