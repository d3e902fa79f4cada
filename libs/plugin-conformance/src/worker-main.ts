// Entry of the conformance worker process the host forks for POST /api/plugins/{pluginId}/doctor
// (bundled beside the host as doctor-worker.cjs).
import { serveOneJob } from './worker';

serveOneJob();
