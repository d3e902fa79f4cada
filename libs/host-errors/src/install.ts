import { defineErrors } from '@host/protocol';

/**
 * The codes of the package installer (libs/host-installer): why the admin API refused to install or update a
 * stdio plugin package. host-plugin doctor reports them too; a plugin never receives them.
 */
export const INSTALL_ERRORS = defineErrors({
  INSTALL_NO_FILE: { status: 400, message: 'No package was uploaded. Send the ZIP as multipart/form-data in the field "package".' },
  INSTALL_UPLOAD_TOO_LARGE: {
    status: 413,
    message: 'The upload is larger than the host accepts. Remove unneeded files from the package or raise HOST_MAX_UPLOAD_BYTES.',
    causes: 'node_modules with dev dependencies, tests or caches in the package.',
    fix: 'Install production dependencies only (npm ci --omit=dev) and leave out __pycache__ and build caches; the SDK packers do.',
  },
  INSTALL_UPLOADS_BUSY: {
    status: 503,
    message: 'The host is receiving as many packages as it takes at once. Retry after the seconds in Retry-After.',
  },
  INSTALL_NOT_A_ZIP: {
    status: 400,
    message: 'The upload is not a readable ZIP archive. Build the package with the packer (host-plugin pack) or any zip tool.',
  },
  INSTALL_ENCRYPTED_ENTRY: { status: 422, message: 'The archive has encrypted entries. Build the package without a password.' },
  INSTALL_UNSUPPORTED_COMPRESSION: {
    status: 422,
    message: 'An entry uses a compression method other than stored or deflate. Re-create the ZIP with deflate.',
  },
  INSTALL_PATH_TRAVERSAL: {
    status: 422,
    message: 'An archive entry climbs out of the package with "..". Re-create the ZIP from inside the package folder.',
    causes: 'A ZIP made by a tool that stores paths relative to a parent folder, or a crafted archive.',
  },
  INSTALL_ABSOLUTE_PATH: {
    status: 422,
    message: 'An archive entry has an absolute path or a drive letter. Re-create the ZIP with relative paths.',
  },
  INSTALL_BACKSLASH_PATH: {
    status: 422,
    message: 'An archive entry uses backslashes. Re-create the ZIP with a tool that writes "/" separators.',
  },
  INSTALL_INVALID_ENTRY_NAME: { status: 422, message: 'An archive entry name is empty or has control characters. Rename the file.' },
  INSTALL_LINK_ENTRY: {
    status: 422,
    message: 'The archive holds a symbolic or hard link. Replace links with the files they point to.',
    causes: 'node_modules/.bin links, or a package folder with symbolic links, zipped with a tool that keeps links.',
    fix: "Replace links with real files, or pack with the SDK's packer, which leaves links out.",
  },
  INSTALL_SPECIAL_ENTRY: {
    status: 422,
    message: 'The archive holds a device, FIFO or socket entry. Package regular files and folders only.',
  },
  INSTALL_DUPLICATE_ENTRY: { status: 422, message: 'Two archive entries have the same path. Re-create the ZIP so each file appears once.' },
  INSTALL_CASE_COLLISION: {
    status: 422,
    message: 'Two entries differ only in letter case and would collide on some systems. Rename one of them.',
    causes: 'Two files such as README.md and readme.md, made on a case-sensitive system.',
  },
  INSTALL_TOO_MANY_ENTRIES: {
    status: 422,
    message: 'The archive has more entries than the host allows. Remove unneeded files (dev dependencies, tests, caches).',
    causes: 'node_modules with dev dependencies, or a virtual environment zipped with the plugin.',
    fix: "Pack with the SDK's packer, which copies the production dependencies only.",
  },
  INSTALL_TOO_LARGE_UNPACKED: {
    status: 422,
    message: 'The unpacked package is larger than the host allows. Remove unneeded files.',
    causes: 'Dev dependencies, caches or data files in the package.',
  },
  INSTALL_COMPRESSION_RATIO: {
    status: 422,
    message: 'An entry expands far more than real files do (a zip bomb guard). Package ordinary files.',
  },
  INSTALL_ZIP_AMBIGUOUS: {
    status: 422,
    message:
      'The archive can be read in more than one way, so zip tools would disagree on what it holds (a second end record in its comment, bytes between its central directory and its end record, conflicting ZIP64 records). Re-create the ZIP with an ordinary zip tool.',
    causes: 'A crafted archive, or one that a tool appended to or edited in place.',
  },
  INSTALL_OVERLAPPING_ENTRIES: {
    status: 422,
    message:
      'Two archive entries share or overlap the same bytes of the archive (a zip bomb guard). Re-create the ZIP with an ordinary zip tool.',
  },
  INSTALL_MANIFEST_MISSING: {
    status: 422,
    message: 'No manifest.json at the archive root or in a single top-level folder named by the plugin id.',
    causes: 'The ZIP has an extra folder level (a folder of a folder), or the manifest was left out.',
    fix: 'Zip the contents of the package folder, or one folder named exactly like the pluginId. The SDK packers do this for you.',
  },
  INSTALL_LAYOUT_AMBIGUOUS: {
    status: 422,
    message:
      'The archive has several top-level folders or files beside a single folder. Put everything at the root or in one folder named by the plugin id.',
    causes: 'Files sit beside the package folder in the ZIP, often a README or a second build folder.',
    fix: 'Put everything inside one folder or at the root.',
  },
  INSTALL_FOLDER_MISMATCH: {
    status: 422,
    message: 'The top-level folder is not named by the plugin id. Rename it to the pluginId or zip the files at the root.',
    causes: 'The single top-level folder is named after the project (my-plugin) instead of the pluginId.',
    fix: 'Rename the folder to the pluginId, or zip the files at the root.',
  },
  INSTALL_MANIFEST_INVALID_JSON: {
    status: 422,
    message: 'manifest.json is not valid JSON. Fix the syntax error at the reported position.',
    causes: 'A trailing comma, a comment or an unquoted key; the message gives the position.',
  },
  INSTALL_MANIFEST_INVALID: {
    status: 422,
    message: 'manifest.json does not follow protocol v2. details.issues lists each field and the fix.',
    causes:
      'Missing required fields (sdkVersion and eventSubscriptions are often forgotten), a misspelt field (unknown fields are refused), a pluginId with capitals. details.issues lists every field as {code, path, message}.',
    fix: 'Add "$schema": "./node_modules/@host/plugin-sdk-v2/schema/manifest.schema.json" to see these in your editor, and run host-plugin validate before packing.',
  },
  INSTALL_TRANSPORT_UNSUPPORTED: {
    status: 422,
    message: 'Only stdio-jsonrpc plugins are installed from a ZIP. For an HTTP plugin, use "Register HTTP plugin" with its base URL.',
    causes: "The manifest is an HTTP plugin's, or transport.type is misspelt.",
    fix: 'HTTP plugins are not uploaded: deploy the service and register its base URL (Register HTTP plugin, POST /api/plugins/http).',
  },
  INSTALL_ENTRY_MISSING: {
    status: 422,
    message: 'The start command names a file that is not in the package. Include the built entry file (not only sources).',
    causes:
      'The ZIP has the sources but not the build output (dist/index.js), or the entry path is relative to the wrong folder (paths are relative to workingDirectory).',
    fix: 'Build first, then pack; the SDK packers refuse to pack a project without its build.',
  },
  INSTALL_DEPENDENCY_MISSING: {
    status: 422,
    message:
      'package.json of this Node package declares dependencies that are not in its node_modules. Pack with "npx host-plugin pack", or bundle them and remove them from "dependencies".',
    causes:
      'The ZIP was made without node_modules (zipped by hand, or node_modules left out). It may have run on a host whose data directory sits inside a checkout with its own node_modules, but it runs nowhere else.',
    fix: 'Pack with npx host-plugin pack, or bundle the dependencies into the entry file and remove them from dependencies.',
  },
  INSTALL_PLATFORM_UNSUPPORTED: {
    status: 422,
    message:
      "The manifest's supportedPlatforms does not list the platform and architecture of this host. Install the package built for this system, or add it to supportedPlatforms if the plugin runs here.",
    causes: 'A Go or other native package built for another operating system or architecture.',
    fix: "Build one ZIP per system (host-plugin pack --goos linux --goarch arm64) and upload the one for the host's machine.",
  },
  INSTALL_WORKDIR_OUTSIDE: {
    status: 422,
    message: 'transport.stdio.workingDirectory leaves the package. Use "." or a folder inside the package.',
    causes: 'workingDirectory with ".." or an absolute path.',
  },
  INSTALL_WORKDIR_MISSING: {
    status: 422,
    message: 'transport.stdio.workingDirectory names a folder that is not in the package. Include the folder or use ".".',
    causes: 'workingDirectory names a folder that was not packed.',
  },
  INSTALL_ENTRY_CORRUPT: {
    status: 422,
    message:
      'An entry unpacks to other bytes than the archive declares (size or CRC-32 mismatch, damaged data). Re-create the ZIP and upload it again.',
  },
  INSTALL_PLUGIN_RUNNING: {
    status: 409,
    message: 'The plugin is running. Confirm the update (it stops and restarts the plugin) or stop it first.',
    causes: 'An install or restore while the plugin runs, without going through the update confirmation.',
  },
  INSTALL_ID_TAKEN: {
    status: 409,
    message: 'This pluginId belongs to a registered HTTP plugin. Remove that registration or choose another pluginId.',
    causes: 'An HTTP plugin with this pluginId is registered: one id, one plugin.',
    fix: 'Remove the HTTP registration, or change the pluginId of the package.',
  },
  UPDATE_CONFIRMATION_REQUIRED: {
    status: 409,
    message: 'A plugin with this pluginId is installed. Review the differences and confirm the pending update, or cancel it.',
    causes: 'Not a failure: a plugin with this pluginId is installed, so the upload is an update.',
    fix: "Review the differences (version, permissions, commands, settings) and confirm; the old version is backed up and the plugin's data and settings are kept.",
  },
  PENDING_UPDATE_NOT_FOUND: {
    status: 404,
    message: 'No pending update with this id. It was confirmed, cancelled or expired: upload the package again.',
  },
  BACKUP_NOT_FOUND: {
    status: 404,
    message: "The plugin has no backup of this name. The newest 3 are kept: see the plugin's backups in GET /api/plugins/{pluginId}.",
  },
  PENDING_UPDATE_STALE: {
    status: 409,
    message: 'The installed plugin changed since this update was prepared. Upload the package again.',
    causes: 'Someone installed, updated or removed the plugin after this update was prepared.',
    fix: 'Upload the package again and confirm the new comparison.',
  },
  INSTALL_FAILED: {
    status: 500,
    message: 'The installation failed part-way and the previous version was restored. See details and the host log.',
  },
});
