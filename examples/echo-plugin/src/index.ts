// The entry the host starts (manifest.json: node dist/index.js --host-stdio).
import plugin from './plugin';

void plugin.main();
