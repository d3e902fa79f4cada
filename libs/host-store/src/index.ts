export * from './atomic-write';
export * from './json-registry-store';
export * from './data-dir-lock';
export * from './file-settings-store';
export * from './file-pending-update-store';
export * from './memory-event-log-store';
export * from './file-event-log-store';
export * from './sql';
