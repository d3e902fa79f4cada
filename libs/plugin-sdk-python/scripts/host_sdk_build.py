"""The build backend of host_sdk_v2 (PEP 517, named by pyproject.toml): writes its wheel and its sdist with
the standard library only, so ``pip install`` of either works offline, with nothing to download first.

    python3 scripts/host_sdk_build.py [--out <folder>]     (default: dist/python in the repository)

writes ``host_sdk_v2-<version>-py3-none-any.whl`` and ``host_sdk_v2-<version>.tar.gz`` and prints their paths.
Both are byte-identical on every build (sorted entries, fixed timestamps, no owner names).

The version is SDK_VERSION of ``host_sdk_v2/_generated/version.py`` (pyproject.toml declares it dynamic),
which tools/sdk-codegen writes from libs/protocol/src/versions.json: the package reports to the host the
same version pip records.
"""

import base64
import gzip
import hashlib
import io
import json
import os
import posixpath
import re
import sys
import tarfile
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGE = "host_sdk_v2"
# The distribution name of pyproject.toml, normalised as wheel and sdist file names spell it (PEP 625).
DIST = "host_sdk_v2"
# 1980-01-01, the earliest time a ZIP entry can carry; the sdist's tar entries use the same instant.
FIXED_ZIP_TIME = (1980, 1, 1, 0, 0, 0)
FIXED_EPOCH = 315532800

# A Markdown link from the SDK's folder to a file elsewhere in the host's repository, which a package lacks.
REPOSITORY_LINK = re.compile(r"\[([^\]]+)\]\((\.\./[^)#\s]+)(#[^)\s]*)?\)")


def unlink_repository(markdown: str) -> str:
    """The README's links to files outside the SDK's folder become text naming the file's path in the host's
    repository, so a README shipped without the repository has no link that leads nowhere."""

    def name(link: "re.Match[str]") -> str:
        target = posixpath.normpath(posixpath.join("libs/plugin-sdk-python", link.group(2)))
        if link.group(1) == target:
            return f"`{target}` in the host's repository"
        return f"{link.group(1)} (`{target}` in the host's repository)"

    return REPOSITORY_LINK.sub(name, markdown)


def version() -> str:
    with open(os.path.join(ROOT, PACKAGE, "_generated", "version.py"), encoding="utf-8") as handle:
        found = re.search(r'^SDK_VERSION = "([^"]+)"$', handle.read(), re.M)
    if not found:
        raise RuntimeError(f"{PACKAGE}/_generated/version.py states no SDK_VERSION")
    return found.group(1)


def project() -> dict:
    """The [project] table of pyproject.toml, the one place of the metadata. Python 3.9 and 3.10 have no TOML
    reader, so this reads the simple `key = value` lines that table uses: a value is a string or an array of
    strings (both written as JSON would write them)."""
    with open(os.path.join(ROOT, "pyproject.toml"), encoding="utf-8") as handle:
        text = handle.read()
    table = re.search(r"^\[project\]\n(.*?)(?=^\[|\Z)", text, re.M | re.S)
    if not table:
        raise RuntimeError("pyproject.toml has no [project] table")
    values = {}
    for line in table.group(1).splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            key, _, value = line.partition("=")
            values[key.strip()] = json.loads(value.strip())
    return values


def readme() -> str:
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as handle:
        return unlink_repository(handle.read())


def metadata() -> str:
    """Core metadata 2.1 (PKG-INFO of the sdist, METADATA of the wheel), from pyproject.toml's [project]."""
    p = project()
    head = [
        "Metadata-Version: 2.1",
        f"Name: {p['name']}",
        f"Version: {version()}",
        f"Summary: {p['description']}",
        f"Requires-Python: {p['requires-python']}",
        *(f"Classifier: {c}" for c in p["classifiers"]),
        "Description-Content-Type: text/markdown",
    ]
    return "\n".join(head) + "\n\n" + readme()


def package_files():
    """(path inside the package folder, absolute path) of every file of host_sdk_v2, sorted, without bytecode."""
    found = []
    top = os.path.join(ROOT, PACKAGE)
    for folder, dirs, names in os.walk(top):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in sorted(names):
            if not name.endswith((".pyc", ".pyo")):
                path = os.path.join(folder, name)
                found.append((os.path.relpath(path, ROOT).replace(os.sep, "/"), path))
    return sorted(found)


def _read(path: str) -> bytes:
    with open(path, "rb") as handle:
        return handle.read()


def _record_line(name: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode("ascii")
    return f"{name},sha256={digest},{len(data)}"


def _write_wheel(wheel_directory: str, entries) -> str:
    """Writes a py3-none-any wheel holding `entries` ((name, bytes), ...) and its .dist-info."""
    v = version()
    info = f"{DIST}-{v}.dist-info"
    files = list(entries)
    files.append((f"{info}/METADATA", metadata().encode("utf-8")))
    files.append((f"{info}/WHEEL", b"Wheel-Version: 1.0\nGenerator: host_sdk_build\nRoot-Is-Purelib: true\nTag: py3-none-any\n"))
    files.append((f"{info}/top_level.txt", f"{PACKAGE}\n".encode("ascii")))
    record = "".join(_record_line(n, d) + "\n" for n, d in files) + f"{info}/RECORD,,\n"
    files.append((f"{info}/RECORD", record.encode("utf-8")))
    os.makedirs(wheel_directory, exist_ok=True)
    name = f"{DIST}-{v}-py3-none-any.whl"
    with zipfile.ZipFile(os.path.join(wheel_directory, name), "w", zipfile.ZIP_DEFLATED) as wheel:
        for entry, data in files:
            item = zipfile.ZipInfo(entry, FIXED_ZIP_TIME)
            item.external_attr = 0o644 << 16
            item.compress_type = zipfile.ZIP_DEFLATED
            wheel.writestr(item, data)
    return name


# PEP 517 hooks. Nothing is needed to build: the backend is this file, on the standard library.


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def get_requires_for_build_editable(config_settings=None):
    return []


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    return _write_wheel(wheel_directory, [(name, _read(path)) for name, path in package_files()])


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    """PEP 660: a wheel whose .pth file puts this folder on sys.path, so edits to host_sdk_v2 apply at once."""
    return _write_wheel(wheel_directory, [(f"__editable__.{DIST}.pth", (ROOT + "\n").encode("utf-8"))])


def build_sdist(sdist_directory, config_settings=None):
    v = version()
    top = f"{DIST}-{v}"
    entries = [(f"{top}/{name}", _read(path)) for name, path in package_files()]
    entries.append((f"{top}/pyproject.toml", _read(os.path.join(ROOT, "pyproject.toml"))))
    entries.append((f"{top}/scripts/host_sdk_build.py", _read(os.path.abspath(__file__))))
    # The sdist's README is the one its metadata carries: the wheel built from it describes itself the same.
    entries.append((f"{top}/README.md", readme().encode("utf-8")))
    entries.append((f"{top}/PKG-INFO", metadata().encode("utf-8")))
    os.makedirs(sdist_directory, exist_ok=True)
    name = f"{top}.tar.gz"
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for entry, data in sorted(entries):
            item = tarfile.TarInfo(entry)
            item.size = len(data)
            item.mtime = FIXED_EPOCH
            item.mode = 0o644
            item.uid = item.gid = 0
            item.uname = item.gname = ""
            tar.addfile(item, io.BytesIO(data))
    with open(os.path.join(sdist_directory, name), "wb") as out:
        with gzip.GzipFile(filename="", mode="wb", fileobj=out, mtime=0) as packed:
            packed.write(buffer.getvalue())
    return name


def build_both(out_dir: str):
    """The wheel and the sdist in `out_dir`, as absolute paths."""
    return [os.path.join(out_dir, build_wheel(out_dir)), os.path.join(out_dir, build_sdist(out_dir))]


if __name__ == "__main__":
    args = sys.argv[1:]
    if args not in ([], ["--out", args[-1]]) or args[-1:] == ["--out"]:
        print("usage: python3 scripts/host_sdk_build.py [--out <folder>]", file=sys.stderr)
        sys.exit(2)
    out = args[1] if args else os.path.join(os.path.dirname(os.path.dirname(ROOT)), "dist", "python")
    for path in build_both(os.path.abspath(out)):
        print(path)
