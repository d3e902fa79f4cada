import { existsSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { copyCsharpSdk, csharpSdkFeed } from '../src/csharp';
import { copyGoSdk } from '../src/go';
import { copyPythonSdk } from '../src/python';

/**
 * Puts the SDKs `init --lang python|go|csharp` copies into a new project beside the built CLI, so the
 * published package works offline and outside this repository: dist/sdk/python/host_sdk_v2 (the Python
 * SDK), dist/sdk/go/sdk-go (the Go SDK module without tests and samples, the files a project needs) and
 * dist/sdk/csharp/packages (the HostSdk .nupkg files of this version, built by plugin-sdk-csharp:feed).
 * Runs after tsup in the build target, from tools/host-plugin.
 */
const cli = process.cwd();
const root = resolve(cli, '..', '..');
const out = join(cli, 'dist', 'sdk');
if (!existsSync(join(cli, 'dist', 'cli.cjs'))) throw new Error(`run from tools/host-plugin after tsup (no dist/cli.cjs in ${cli})`);
rmSync(out, { recursive: true, force: true });
copyPythonSdk(join(out, 'python'), join(root, 'libs', 'plugin-sdk-python', 'host_sdk_v2'));
copyGoSdk(join(out, 'go'), join(root, 'libs', 'plugin-sdk-go'));
const packages = copyCsharpSdk(join(out, 'csharp'), csharpSdkFeed(join(cli, 'dist')));
console.log(`bundled the Python, Go and C# SDKs into dist/sdk (${packages.map((p) => p.slice('packages/'.length)).join(', ')})`);
