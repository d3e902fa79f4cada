"""Builds the release archive SDK-V2-Python-<version>.zip: the SDK package (with its packer), its
README, the sample plugin and the manifest JSON Schema, in one folder, byte-identical on every build.

    python3 scripts/build_release.py [--out <folder>]      (default: dist/ in the repository)
"""

import os
import posixpath
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REPO = os.path.dirname(os.path.dirname(ROOT))
sys.path.insert(0, ROOT)

from host_sdk_v2._version import SDK_VERSION  # noqa: E402
from host_sdk_v2.pack import _walk, write_zip  # noqa: E402


# A Markdown link from the SDK's folder to a file elsewhere in the host's repository, which the archive lacks.
REPOSITORY_LINK = re.compile(r"\[([^\]]+)\]\((\.\./[^)#\s]+)(#[^)\s]*)?\)")


def unlink_repository(markdown: str) -> str:
    """The README's links to files outside the SDK's folder become text naming the file's path in the host's
    repository, so the archive's README has no link that leads nowhere."""

    def name(link: "re.Match[str]") -> str:
        target = posixpath.normpath(posixpath.join("libs/plugin-sdk-python", link.group(2)))
        if link.group(1) == target:
            return f"`{target}` in the host's repository"
        return f"{link.group(1)} (`{target}` in the host's repository)"

    return REPOSITORY_LINK.sub(name, markdown)


def release_files(prefix: str, readme: bytes):
    files = {}
    for name, path in _walk(os.path.join(ROOT, "host_sdk_v2"), f"{prefix}host_sdk_v2/"):
        files[name] = path
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
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as handle:
        readme = unlink_repository(handle.read())
    write_zip(path, sorted(release_files(f"{name}/", readme.encode("utf-8")).items()))
    return path


if __name__ == "__main__":
    args = sys.argv[1:]
    out = args[args.index("--out") + 1] if "--out" in args else os.path.join(REPO, "dist")
    print(build(os.path.abspath(out)))
