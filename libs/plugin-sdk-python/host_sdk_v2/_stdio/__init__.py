"""The parts of the stdio runtime, one module each; ``host_sdk_v2.stdio`` puts them together as
``StdioRuntime`` and is the module to import."""
