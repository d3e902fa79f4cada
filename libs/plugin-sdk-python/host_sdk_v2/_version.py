"""Name and version of this SDK, reported to the host in the handshake."""

SDK_NAME = "host_sdk_v2"
SDK_VERSION = "2.0.0"
