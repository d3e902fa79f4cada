import { keysFromSecret, seedFromSecret, signHex, validationSignature, verifyWebhook } from './signing';

describe('QQ Bot signing', () => {
  it('answers the known-answer validation vector of the platform documentation', () => {
    // app id 11111111; body {"d":{"plain_token":"Arq0D5A61EgUu4OxUvOp","event_ts":"1725442341"},"op":13}
    const { privateKey } = keysFromSecret('DG5g3B4j9X2KOErG');
    expect(validationSignature(privateKey, '1725442341', 'Arq0D5A61EgUu4OxUvOp')).toBe(
      '87befc99c42c651b3aac0278e71ada338433ae26fcb24307bdc5ad38c1adc2d01bcfcadc0842edac85e85205028a1132afe09280305f13aa6909ffc2d652c706',
    );
  });

  it('derives the seed by repeating the secret and cutting it to 32 bytes', () => {
    expect(seedFromSecret('DG5g3B4j9X2KOErG').toString()).toBe('DG5g3B4j9X2KOErGDG5g3B4j9X2KOErG');
    expect(seedFromSecret('abc').toString()).toBe('abcabcabcabcabcabcabcabcabcabcab');
    expect(seedFromSecret('x'.repeat(40)).length).toBe(32);
    expect(() => seedFromSecret('')).toThrow(/must not be empty/);
  });

  it('verifies a signature over timestamp + raw body and refuses any change', () => {
    const keys = keysFromSecret('a-bot-secret-123');
    const body = Buffer.from('{"op":0,"d":{"content":"hi"}}');
    const sig = signHex(keys.privateKey, Buffer.concat([Buffer.from('1700000000'), body]));
    expect(verifyWebhook(keys.publicKey, '1700000000', body, sig)).toBe(true);
    expect(verifyWebhook(keys.publicKey, '1700000001', body, sig)).toBe(false);
    expect(verifyWebhook(keys.publicKey, '1700000000', Buffer.from('{"op":0,"d":{"content":"hI"}}'), sig)).toBe(false);
    expect(verifyWebhook(keysFromSecret('another-secret-1').publicKey, '1700000000', body, sig)).toBe(false);
    expect(verifyWebhook(keys.publicKey, '1700000000', body, 'zz')).toBe(false);
    expect(verifyWebhook(keys.publicKey, '1700000000', body, '0'.repeat(128))).toBe(false);
  });
});
