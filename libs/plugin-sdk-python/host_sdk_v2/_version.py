"""Name and version of this SDK, reported to the host in the handshake."""

# SDK_VERSION is generated from libs/protocol/src/versions.json by tools/sdk-codegen.
from ._generated.version import SDK_VERSION

SDK_NAME = "host_sdk_v2"

__all__ = ["SDK_NAME", "SDK_VERSION"]
