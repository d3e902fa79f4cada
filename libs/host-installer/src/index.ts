export * from './limits';
export * from './archive';
export * from './archive-source';
export {
  checkDirectoryEnd,
  notAZip,
  readEndRecord,
  resolveZip64,
  type CentralRecord,
  type EndRecord,
  type LocalHeader,
} from './zip-structure';
export * from './entry-name';
export * from './extract';
export * from './inspect';
export * from './package-checks';
export * from './update-diff';
export * from './pending-updates';
export * from './discovery';
export * from './backups';
export * from './journal';
export * from './installer';
export * from './zip-folder';
