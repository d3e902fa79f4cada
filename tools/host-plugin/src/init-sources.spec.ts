import { join, resolve } from 'node:path';
import { SDK_VERSION } from '@host/plugin-sdk-v2';
import { packageSources } from './init';

const ROOT = resolve(__dirname, '../../..');

describe('where init points the SDK and CLI dependencies', () => {
  it('links a checkout of the host repository when the CLI runs from it', () => {
    expect(packageSources(join(ROOT, 'tools/host-plugin/dist'))).toEqual({
      sdk: `file:${join(ROOT, 'libs/plugin-sdk')}`,
      cli: `file:${join(ROOT, 'tools/host-plugin')}`,
    });
  });

  it('uses the published version range when the CLI is an installed package', () => {
    const installed = join(ROOT, 'tmp/project/node_modules/@host/host-plugin/dist');
    expect(packageSources(installed)).toEqual({ sdk: `^${SDK_VERSION}`, cli: `^${SDK_VERSION}` });
    expect(packageSources('/nowhere/near/a/checkout')).toEqual({ sdk: `^${SDK_VERSION}`, cli: `^${SDK_VERSION}` });
  });
});
