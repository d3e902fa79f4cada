"""Builds the release archive SDK-V2-Python-<version>.zip: the SDK's wheel and sdist (which pip installs
offline; the SDK carries its packer), its README, the sample plugin and the manifest JSON Schema, in one
folder, byte-identical on every build.

    python3 scripts/build_release.py [--out <folder>]      (default: dist/ in the repository)
"""

import os
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REPO = os.path.dirname(os.path.dirname(ROOT))
sys.path.insert(0, ROOT)

from host_sdk_v2._version import SDK_VERSION  # noqa: E402
from host_sdk_v2.pack import write_zip  # noqa: E402

sys.path.insert(0, os.path.join(ROOT, "scripts"))
import host_sdk_build  # noqa: E402
from host_sdk_build import unlink_repository  # noqa: E402,F401  (the archive's README is unlinked the same way)


def release_files(prefix: str, readme: bytes, packages: list):
    files = {}
    # The wheel and the sdist, for `pip install --no-index --find-links packages host-sdk-v2`.
    for path in packages:
        files[f"{prefix}packages/{os.path.basename(path)}"] = path
    # The sample keeps its tests: they are part of what it shows.
    sample = os.path.join(ROOT, "samples", "echo")
    for folder, dirs, names in os.walk(sample):
        dirs[:] = sorted(d for d in dirs if d not in ("__pycache__", "artifacts"))
        for n in sorted(names):
            if not n.endswith((".pyc", ".pyo")):
                path = os.path.join(folder, n)
                files[f"{prefix}samples/echo/" + os.path.relpath(path, sample).replace(os.sep, "/")] = path
    files[f"{prefix}README.md"] = readme
    files[f"{prefix}schema/manifest.schema.json"] = os.path.join(REPO, "libs", "protocol", "schema", "manifest.schema.json")
    return files


def build(out_dir: str) -> str:
    name = f"SDK-V2-Python-{SDK_VERSION}"
    path = os.path.join(out_dir, f"{name}.zip")
    with tempfile.TemporaryDirectory(prefix="sdk-python-release-") as built:
        packages = host_sdk_build.build_both(built)
        readme = host_sdk_build.readme()
        write_zip(path, sorted(release_files(f"{name}/", readme.encode("utf-8"), packages).items()))
    return path


if __name__ == "__main__":
    args = sys.argv[1:]
    out = args[args.index("--out") + 1] if "--out" in args else os.path.join(REPO, "dist")
    print(build(os.path.abspath(out)))
