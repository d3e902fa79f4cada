// Test helpers: a local fake of the QQ Bot Open Platform and the platform's side of the webhook.
export {
  FakeQqPlatform,
  type FakeQqPlatformOptions,
  type RecordedInteractionAck,
  type RecordedMessage,
  type RecordedUpload,
  type ScriptedAnswer,
} from './fake-platform';
export {
  WebhookSigner,
  platformTime,
  type SignedPostOptions,
  type WebhookAnswerSeen,
  type GroupAtMessage,
  type C2cMessage,
  type ChannelAtMessage,
} from './webhook-signer';
