import { HostError } from '@host/host-core';
import type { PluginInstaller } from '@host/host-installer';
import multer from 'multer';
import { relative } from 'node:path';
import { pluginDetail, type ViewDeps } from '../plugin-view';
import { defineRoute, type RouteDef } from '../route-table';
import { uploadSlots } from '../upload-slots';
import {
  CancelledResponseSchema,
  ConfirmUpdateBodySchema,
  InstallResponseSchema,
  PackageUploadFieldsSchema,
  PendingUpdateResponseSchema,
} from '../schemas';
import type { RegistryStore } from '@host/host-core';

export interface PackageRouteDeps extends ViewDeps {
  store: RegistryStore;
  installer: PluginInstaller;
  maxUploadBytes: number;
  /** Uploads received and checked at once (default DEFAULT_MAX_CONCURRENT_UPLOADS); more answer 503 INSTALL_UPLOADS_BUSY. */
  maxConcurrentUploads?: number;
}

const PENDING_PARAM = { id: 'Pending update id from the UPDATE_CONFIRMATION_REQUIRED answer.' };

export function packageRoutes(deps: PackageRouteDeps): RouteDef<unknown, unknown>[] {
  // The archive is held in memory (bounded by maxUploadBytes): it is hashed, checked and unpacked from one buffer.
  const upload = multer({
    storage: multer.memoryStorage(),
    limits: { fileSize: deps.maxUploadBytes, files: 1, fields: 8, parts: 9, fieldSize: 1024 },
  }).single('package');
  const result = async (r: Awaited<ReturnType<PluginInstaller['install']>>) => ({
    plugin: await pluginDetail(deps, r.record.pluginId, await deps.store.get(r.record.pluginId)),
    started: r.started,
    ...(r.startError ? { startError: r.startError } : {}),
    ...(r.backup ? { backup: relative(deps.paths.dataDir, r.backup) } : {}),
  });
  return [
    defineRoute({
      method: 'post',
      path: '/plugins/packages',
      summary: 'Upload a stdio plugin package (ZIP)',
      description:
        'Installs a new plugin (201). When the pluginId is installed already, the upload becomes a pending update (409 UPDATE_CONFIRMATION_REQUIRED with pendingUpdate: installed and incoming details and the changes) that must be confirmed or cancelled. Nothing in the archive is executed.',
      tags: ['packages'],
      multipart: { fileField: 'package', fileDescription: 'The plugin ZIP.', fields: PackageUploadFieldsSchema },
      before: [uploadSlots(deps.maxConcurrentUploads), upload],
      responses: { 201: { description: 'Installed.', schema: InstallResponseSchema } },
      errors: [
        'INSTALL_NO_FILE',
        'BAD_REQUEST',
        'INSTALL_UPLOAD_TOO_LARGE',
        'INSTALL_UPLOADS_BUSY',
        'INSTALL_NOT_A_ZIP',
        'INSTALL_ENCRYPTED_ENTRY',
        'INSTALL_UNSUPPORTED_COMPRESSION',
        'INSTALL_PATH_TRAVERSAL',
        'INSTALL_ABSOLUTE_PATH',
        'INSTALL_BACKSLASH_PATH',
        'INSTALL_INVALID_ENTRY_NAME',
        'INSTALL_LINK_ENTRY',
        'INSTALL_SPECIAL_ENTRY',
        'INSTALL_DUPLICATE_ENTRY',
        'INSTALL_CASE_COLLISION',
        'INSTALL_TOO_MANY_ENTRIES',
        'INSTALL_TOO_LARGE_UNPACKED',
        'INSTALL_COMPRESSION_RATIO',
        'INSTALL_OVERLAPPING_ENTRIES',
        'INSTALL_ENTRY_CORRUPT',
        'INSTALL_MANIFEST_MISSING',
        'INSTALL_LAYOUT_AMBIGUOUS',
        'INSTALL_FOLDER_MISMATCH',
        'INSTALL_MANIFEST_INVALID_JSON',
        'INSTALL_MANIFEST_INVALID',
        'INSTALL_TRANSPORT_UNSUPPORTED',
        'INSTALL_ENTRY_MISSING',
        'INSTALL_WORKDIR_OUTSIDE',
        'INSTALL_WORKDIR_MISSING',
        'INSTALL_ID_TAKEN',
        'UPDATE_CONFIRMATION_REQUIRED',
        'INSTALL_FAILED',
      ],
      handler: async ({ req, body }) => {
        const file = (req as { file?: { buffer: Buffer } }).file;
        if (!file) throw new HostError('INSTALL_NO_FILE');
        const r = await deps.installer.install(file.buffer, { startAfterInstall: body.startAfterInstall === 'true' });
        return { status: 201, body: await result(r) };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/plugins/packages/pending/{id}',
      summary: 'A pending update (installed and incoming details, changes)',
      tags: ['packages'],
      params: PENDING_PARAM,
      responses: { 200: { description: 'The pending update.', schema: PendingUpdateResponseSchema } },
      errors: ['PENDING_UPDATE_NOT_FOUND'],
      handler: async ({ params }) => ({ body: { pendingUpdate: await deps.installer.getPendingUpdate(params['id']!) } }),
    }),
    defineRoute({
      method: 'post',
      path: '/plugins/packages/pending/{id}/confirm',
      summary: 'Confirm a pending update',
      description:
        'Re-checks the archive SHA-256 and that the installed version did not change, stops the plugin if it runs, moves the installed version to backups/<pluginId>/ (newest 3 kept), puts the new one in place (restoring the backup if anything fails) and starts the plugin again if it was running.',
      tags: ['packages'],
      params: PENDING_PARAM,
      body: ConfirmUpdateBodySchema,
      responses: { 200: { description: 'Updated.', schema: InstallResponseSchema } },
      errors: ['BAD_REQUEST', 'PENDING_UPDATE_NOT_FOUND', 'PENDING_UPDATE_STALE', 'INSTALL_PLUGIN_RUNNING', 'INSTALL_FAILED', 'INSTALL_TOO_LARGE_UNPACKED', 'INSTALL_COMPRESSION_RATIO'],
      handler: async ({ params, body }) => ({ body: await result(await deps.installer.confirmUpdate(params['id']!, body)) }),
    }),
    defineRoute({
      method: 'delete',
      path: '/plugins/packages/pending/{id}',
      summary: 'Cancel a pending update',
      tags: ['packages'],
      params: PENDING_PARAM,
      responses: { 200: { description: 'Cancelled; the stored archive is deleted.', schema: CancelledResponseSchema } },
      errors: ['PENDING_UPDATE_NOT_FOUND'],
      handler: async ({ params }) => {
        await deps.installer.cancelUpdate(params['id']!);
        return { body: { cancelled: params['id'] } };
      },
    }),
  ] as RouteDef<unknown, unknown>[];
}
