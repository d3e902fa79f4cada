import { HostError, type PluginRuntime } from '@host/host-core';

/**
 * The runtime of a host built without the stdio process supervisor: nothing
 * runs, and start/stop/restart answer RUNTIME_UNAVAILABLE. The composition
 * root replaces it with the real runtime.
 */
export function createUnavailableRuntime(): PluginRuntime {
  const unavailable = async (): Promise<never> => {
    throw new HostError('RUNTIME_UNAVAILABLE', 'This host runs without the plugin runtime, so plugins cannot be started or stopped yet.');
  };
  return {
    start: unavailable,
    stop: unavailable,
    restart: unavailable,
    status: () => undefined,
    isRunning: () => false,
    stopAll: async () => undefined,
  };
}
