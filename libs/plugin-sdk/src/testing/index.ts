export {
  createTestHost,
  type TestClick,
  type TestCompletion,
  type TestDelivery,
  type TestDeliveryInProgress,
  type TestHost,
  type TestHostOptions,
  type TestLogEntry,
  type TestMessage,
  type TestReply,
  type TestUpload,
} from './test-host';
export { matchCommand } from './command-match';
