export { createTestHost, type TestDelivery, type TestHost, type TestHostOptions, type TestLogEntry, type TestMessage, type TestReply } from './test-host';
export { matchCommand } from './command-match';
