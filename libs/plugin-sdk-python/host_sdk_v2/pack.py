"""The packer: ``python -m host_sdk_v2.pack [project] [--out artifacts] [--pip-arg ARG]...``

Writes ``<out>/<pluginId>.zip`` with ``manifest.json``, the plugin's code, the vendored ``host_sdk_v2``
and the dependencies of ``requirements.txt`` (installed with ``pip install --target``). Entries are
sorted and carry a fixed timestamp, so two packs of the same inputs are byte-identical; no
``__pycache__`` or ``.pyc``. Before writing, it starts the staged package as the host would and checks
the handshake, so a package that would not start (missing entry, ``--host-stdio`` missing from
``args``, a dependency that does not import) is refused.
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Set, Tuple, Union

from ._generated.catalog import HOST_STDIO_FLAG, PACK_ERROR_CODES
from ._version import SDK_VERSION
from .framing import FrameDecoder, encode_frame
from .validation import validate_manifest

#: The packaging error codes every packer reports (docs/protocol/v2.md section 11.5): code -> the fix printed
#: with it. Generated from the protocol's catalogue, so the Node.js, Go and C# packers use the same codes.
PACK_ERRORS: Mapping[str, str] = PACK_ERROR_CODES

#: The codes this packer reports (README.md lists them; a test checks both ways and that each is catalogued).
PYTHON_PACK_CODES = (
    "PACK_USAGE",
    "PACK_MANIFEST_MISSING",
    "PACK_MANIFEST_INVALID",
    "PACK_TRANSPORT_NOT_STDIO",
    "PACK_HOST_STDIO_MISSING",
    "PACK_ENTRY_MISSING",
    "PACK_ABSOLUTE_PATH",
    "PACK_WORKDIR_OUTSIDE",
    "PACK_WORKDIR_MISSING",
    "PACK_SDK_VERSION_MISMATCH",
    "PACK_TOOL_MISSING",
    "PACK_DEPENDENCY_INSTALL_FAILED",
    "PACK_DEPENDENCY_UNRESOLVED",
    "PACK_START_FAILED",
    "PACK_OUTPUT_NOT_WRITABLE",
)

FIXED_TIME = (1980, 1, 1, 0, 0, 0)
EXCLUDED_DIRS = {"artifacts", ".git", "__pycache__", ".venv", "venv", "env", "node_modules", "tests", ".mypy_cache", ".pytest_cache", "build", "dist", ".idea", ".vscode"}
EXCLUDED_SUFFIXES = (".pyc", ".pyo")
INTERPRETERS = {"python", "python3", "py"}
START_TIMEOUT_SECONDS = 15.0


class PackError(Exception):
    """A failure the author can fix: ``error CODE: what happened`` then the fix."""

    def __init__(self, code: str, detail: str, details: Sequence[str] = ()) -> None:
        if code not in PACK_ERRORS:
            raise ValueError(f"{code} is not a packaging error code of the catalogue")
        super().__init__(detail)
        self.code = code
        self.details = list(details)

    def render(self) -> str:
        lines = [f"error {self.code}: {self}"] + [f"  - {d}" for d in self.details] + [f"  fix: {PACK_ERRORS[self.code]}"]
        return "\n".join(lines)


def _is_interpreter(command: str) -> bool:
    base = os.path.basename(command).lower()
    if base.endswith(".exe"):
        base = base[:-4]
    return base in INTERPRETERS or (base.startswith("python3.") and base[8:].isdigit())


def _inside(root: str, path: str) -> bool:
    root = os.path.realpath(root)
    path = os.path.realpath(path)
    return path == root or path.startswith(root + os.sep)


def check_launch(project: str, manifest: Dict[str, Any]) -> None:
    """The start command would find its entry: --host-stdio given, relative paths, entry present."""
    stdio = manifest["transport"]["stdio"]
    args: List[str] = stdio.get("args", [])
    if HOST_STDIO_FLAG not in args:
        raise PackError("PACK_HOST_STDIO_MISSING", f"args are {json.dumps(args)}")
    workdir = stdio.get("workingDirectory", ".")
    if os.path.isabs(workdir):
        raise PackError("PACK_ABSOLUTE_PATH", f"workingDirectory is {workdir}")
    cwd = os.path.join(project, workdir)
    if not _inside(project, cwd):
        raise PackError("PACK_WORKDIR_OUTSIDE", f"workingDirectory is {workdir!r}")
    if not os.path.isdir(cwd):
        raise PackError("PACK_WORKDIR_MISSING", f"{workdir!r} is not a folder of {project}")
    command = stdio["command"]
    if _is_interpreter(command):
        script = next((a for a in args if not a.startswith("-")), None)
        if script is None:
            raise PackError("PACK_ENTRY_MISSING", f"{command} is given no script in args {json.dumps(args)}")
        if os.path.isabs(script):
            raise PackError("PACK_ABSOLUTE_PATH", f"the script is {script}")
        if not os.path.isfile(os.path.join(cwd, script)):
            raise PackError("PACK_ENTRY_MISSING", f"{os.path.join(workdir, script)} does not exist in {project}")
    elif os.sep in command or "/" in command:
        if os.path.isabs(command):
            raise PackError("PACK_ABSOLUTE_PATH", f"command is {command}")
        if not os.path.isfile(os.path.join(cwd, command)):
            raise PackError("PACK_ENTRY_MISSING", f"{command} does not exist in {project}")


def _walk(root: str, prefix: str = "") -> Iterable[Tuple[str, str]]:
    """(archive name, file path) of every file under ``root`` that belongs in a package."""
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in EXCLUDED_DIRS and not d.endswith(".egg-info") and not os.path.islink(os.path.join(folder, d)))
        for name in sorted(files):
            path = os.path.join(folder, name)
            if name.endswith(EXCLUDED_SUFFIXES) or os.path.islink(path):
                continue
            rel = os.path.relpath(path, root).replace(os.sep, "/")
            yield prefix + rel, path


def _requirements(project: str) -> Optional[str]:
    path = os.path.join(project, "requirements.txt")
    if not os.path.isfile(path):
        return None
    with open(path, encoding="utf-8") as handle:
        lines = [line.split("#", 1)[0].strip() for line in handle]
    return path if any(lines) else None


def install_requirements(requirements: str, target: str, pip_args: Sequence[str], log: Any) -> None:
    """``pip install --target`` into ``target``; PACK_TOOL_MISSING when this Python has no pip."""
    probe = subprocess.run([sys.executable, "-m", "pip", "--version"], capture_output=True, text=True)
    if probe.returncode != 0:
        raise PackError("PACK_TOOL_MISSING", f"requirements.txt lists dependencies, but {sys.executable} -m pip does not run: {(probe.stderr or probe.stdout).strip()[:300]}")
    command = [
        sys.executable, "-m", "pip", "install", "--target", target, "--no-compile", "--disable-pip-version-check",
        "--no-input", "--no-warn-script-location", "-r", requirements, *pip_args,
    ]
    log(f"installing dependencies: pip install --target <package> -r {os.path.basename(requirements)} {' '.join(pip_args)}".rstrip())
    run = subprocess.run(command, capture_output=True, text=True, env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"})
    if run.returncode != 0:
        raise PackError("PACK_DEPENDENCY_INSTALL_FAILED", f"pip install -r requirements.txt exited with {run.returncode}", [line for line in (run.stdout + run.stderr).strip().splitlines()[-15:]])


def _top_level_modules(site: str) -> List[str]:
    """Import names of what pip installed: from each distribution's top_level.txt, else its folders and modules."""
    names: Set[str] = set()
    for entry in os.listdir(site):
        full = os.path.join(site, entry)
        if entry.endswith(".dist-info"):
            top = os.path.join(full, "top_level.txt")
            if os.path.isfile(top):
                with open(top, encoding="utf-8") as handle:
                    names.update(line.strip() for line in handle if line.strip())
        elif entry in ("bin", "__pycache__") or entry.startswith("."):
            continue
        elif os.path.isdir(full) and os.path.isfile(os.path.join(full, "__init__.py")):
            names.add(entry)
        elif entry.endswith(".py"):
            names.add(entry[:-3])
    return sorted(n for n in names if n.isidentifier())


def check_imports(stage: str, modules: Sequence[str]) -> None:
    """Each installed dependency imports from the staged package alone."""
    for module in modules:
        run = subprocess.run(
            [sys.executable, "-I", "-c", f"import sys; sys.path.insert(0, {stage!r}); import {module}"],
            capture_output=True, text=True, cwd=stage, env={"PATH": os.environ.get("PATH", ""), "PYTHONDONTWRITEBYTECODE": "1"},
        )
        if run.returncode != 0:
            raise PackError("PACK_DEPENDENCY_UNRESOLVED", f"import {module} failed from the staged package", (run.stderr.strip().splitlines() or ["(no output)"])[-5:])


def check_start(stage: str, manifest: Dict[str, Any]) -> None:
    """Starts the staged package as the host does and expects a valid handshake answer."""
    stdio = manifest["transport"]["stdio"]
    command = stdio["command"]
    program = shutil.which(command) or (sys.executable if _is_interpreter(command) else os.path.join(stage, stdio.get("workingDirectory", "."), command))
    cwd = os.path.join(stage, stdio.get("workingDirectory", "."))
    with tempfile.TemporaryDirectory() as data:
        env = {k: os.environ[k] for k in ("PATH", "HOME", "LANG", "LC_ALL", "TZ", "TMPDIR", "SYSTEMROOT") if k in os.environ}
        env.update(stdio.get("environment", {}))
        env.update({"HOST_PLUGIN_ID": manifest["pluginId"], "HOST_PLUGIN_DIR": stage, "HOST_PLUGIN_DATA_DIR": data, "HOST_PLUGIN_CONFIG_DIR": data, "HOST_PLUGIN_CACHE_DIR": data, "PYTHONDONTWRITEBYTECODE": "1"})
        proc = subprocess.Popen([program, *stdio.get("args", [])], cwd=cwd, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        params = {
            "supportedProtocolVersions": [2], "instanceId": "pack-check", "pluginId": manifest["pluginId"], "hostVersion": "pack-check",
            "directories": {"pluginDirectory": stage, "pluginDataDirectory": data, "pluginConfigDirectory": data, "pluginCacheDirectory": data},
            "token": "pack-check-" + "0" * 32, "encoding": "json", "settings": {},
        }
        assert proc.stdin is not None and proc.stdout is not None
        answer: Optional[Dict[str, Any]] = None
        try:
            proc.stdin.write(encode_frame({"jsonrpc": "2.0", "id": 1, "method": "host.initialize", "params": params}))
            proc.stdin.flush()
            decoder = FrameDecoder()
            deadline = time.monotonic() + START_TIMEOUT_SECONDS
            import selectors

            selector = selectors.DefaultSelector()
            selector.register(proc.stdout, selectors.EVENT_READ)
            while answer is None and time.monotonic() < deadline:
                if not selector.select(timeout=max(0.0, deadline - time.monotonic())):
                    break
                chunk = os.read(proc.stdout.fileno(), 65536)
                if not chunk:
                    break
                for event in decoder.push(chunk):
                    message: Dict[str, Any] = event[1] if event[0] == "message" else {}
                    if event[0] == "message" and message.get("id") == 1:
                        answer = message
                    elif event[0] == "message" and "method" in message:
                        # log.write and the like during start: accept them as the host would.
                        reply = {"jsonrpc": "2.0", "id": message["id"], "result": {"accepted": True}}
                        proc.stdin.write(encode_frame(reply))
                        proc.stdin.flush()
                    elif event[0] == "error":
                        raise PackError("PACK_START_FAILED", f"the plugin wrote something other than protocol frames to stdout ({event[1]})")
        except (BrokenPipeError, OSError):
            pass
        finally:
            try:
                proc.stdin.close()
            except OSError:
                pass
            try:
                proc.wait(5)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            stderr = proc.stderr.read().decode("utf-8", "replace") if proc.stderr else ""
            for stream in (proc.stdout, proc.stderr):
                if stream:
                    stream.close()
        tail = stderr.strip().splitlines()[-8:]
        if answer is None:
            raise PackError("PACK_START_FAILED", f"no handshake answer within {START_TIMEOUT_SECONDS:.0f} s (exit code {proc.returncode})", tail)
        if "error" in answer or answer.get("result", {}).get("pluginId") != manifest["pluginId"]:
            raise PackError("PACK_START_FAILED", f"the handshake answer is {json.dumps(answer)[:300]}", tail)


def write_zip(path: str, files: Sequence[Tuple[str, Union[str, bytes]]]) -> None:
    """Sorted entries with a fixed time and permissions: the same files give the same bytes. Each entry's
    source is a file's path, or the entry's bytes themselves (written as a plain file, mode 0644)."""
    partial = path + ".partial"
    try:
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        output = open(partial, "wb")
    except OSError as error:
        raise PackError("PACK_OUTPUT_NOT_WRITABLE", f"cannot write {path}: {error.strerror or error}") from error
    with output, zipfile.ZipFile(output, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=9) as archive:
        for name, source in sorted(files):
            info = zipfile.ZipInfo(name, date_time=FIXED_TIME)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.create_system = 3
            if isinstance(source, bytes):
                mode, data = 0o644, source
            else:
                mode = 0o755 if os.access(source, os.X_OK) and not name.endswith((".py", ".json", ".txt")) else 0o644
                with open(source, "rb") as handle:
                    data = handle.read()
            info.external_attr = (0o100000 | mode) << 16
            archive.writestr(info, data, compresslevel=9)
    try:
        os.replace(partial, path)
    except OSError as error:
        os.unlink(partial)
        raise PackError("PACK_OUTPUT_NOT_WRITABLE", f"cannot write {path}: {error.strerror or error}") from error


def _describes_http_plugin(raw: Any) -> bool:
    """An HTTP plugin manifest (capabilities and no transport), or a transport other than stdio."""
    if not isinstance(raw, dict):
        return False
    transport = raw.get("transport")
    if transport is None:
        return "capabilities" in raw
    return isinstance(transport, dict) and transport.get("type") not in (None, "stdio-jsonrpc")


def load_project(project: str, log: Any = print) -> Dict[str, Any]:
    """The checks that need no staging: manifest.json against the protocol schema and the start
    command; returns the manifest with its defaults or raises PackError."""
    project = os.path.abspath(project)
    manifest_path = os.path.join(project, "manifest.json")
    if not os.path.isfile(manifest_path):
        raise PackError("PACK_MANIFEST_MISSING", f"{manifest_path} does not exist")
    try:
        with open(manifest_path, encoding="utf-8-sig") as handle:
            raw = json.load(handle)
    except ValueError as error:
        raise PackError("PACK_MANIFEST_INVALID", f"manifest.json is not JSON: {error}") from error
    if _describes_http_plugin(raw):
        raise PackError("PACK_TRANSPORT_NOT_STDIO", "manifest.json has no stdio transport (it is an HTTP plugin manifest)")
    manifest, issues = validate_manifest(raw, "stdio")
    if manifest is None:
        raise PackError("PACK_MANIFEST_INVALID", f"{len(issues)} problem(s) in manifest.json", [f"{i['code']} at {i['path'] or '(document)'}: {i['message']}" for i in issues])
    check_launch(project, manifest)
    if manifest["sdkVersion"] != SDK_VERSION:
        log(f"warning PACK_SDK_VERSION_MISMATCH: manifest.json has sdkVersion {manifest['sdkVersion']} but the packed SDK is {SDK_VERSION}")
        log(f"  fix: {PACK_ERRORS['PACK_SDK_VERSION_MISMATCH']}")
    return manifest


def validate(project: str, log: Any = print) -> Dict[str, Any]:
    """What ``--check`` (and ``host-plugin validate``) runs: :func:`load_project`, writing nothing. The
    staged start check needs the dependencies installed, so it belongs to :func:`pack`."""
    manifest = load_project(project, log)
    log(f"ok: {manifest['pluginId']} {manifest['version']} is ready to pack")
    return manifest


def pack(project: str, out_dir: Optional[str] = None, pip_args: Sequence[str] = (), log: Any = print, check: bool = True) -> str:
    """Packs the project; returns the path of the ZIP or raises PackError."""
    project = os.path.abspath(project)
    manifest = load_project(project, log)
    files: Dict[str, str] = {}
    for name, path in _walk(project):
        files[name] = path
    sdk_dir = os.path.dirname(os.path.abspath(__file__))
    if not any(name.startswith("host_sdk_v2/") for name in files):
        for name, path in _walk(sdk_dir, "host_sdk_v2/"):
            files[name] = path
    with tempfile.TemporaryDirectory() as work:
        site = os.path.join(work, "site")
        os.makedirs(site)
        requirements = _requirements(project)
        modules: List[str] = []
        if requirements:
            install_requirements(requirements, site, pip_args, log)
            for name, path in _walk(site):
                if name.split("/", 1)[0] == "bin":
                    continue  # console scripts point at this machine's interpreter
                files.setdefault(name, path)
            modules = _top_level_modules(site)
        stage = os.path.join(work, "stage")
        for name, path in files.items():
            target = os.path.join(stage, *name.split("/"))
            os.makedirs(os.path.dirname(target), exist_ok=True)
            shutil.copy2(path, target)
        if check:
            check_imports(stage, modules)
            check_start(stage, manifest)
        out = os.path.join(project, out_dir or "artifacts") if not (out_dir and os.path.isabs(out_dir)) else out_dir
        zip_path = os.path.join(out, f"{manifest['pluginId']}.zip")
        # The staged copies are what was checked: pack exactly those.
        write_zip(zip_path, [(name, os.path.join(stage, *name.split("/"))) for name in files])
    log(f"packed {manifest['pluginId']} {manifest['version']}: {len(files)} files -> {zip_path}")
    return zip_path


USAGE = """python -m host_sdk_v2.pack [project] [--out <folder>] [--pip-arg <arg>]... [--no-start-check] [--check]

Validates manifest.json, installs requirements.txt into the package (pip install --target), vendors
host_sdk_v2, starts the staged package once to check its handshake, and writes <folder>/<pluginId>.zip
(default artifacts/ in the project). The same inputs give the same bytes.
  --pip-arg       passed to pip install, e.g. --pip-arg=--no-index --pip-arg=--find-links=wheels
  --no-start-check  skip the handshake check (for packages built for another system)
  --check         only validate manifest.json and the start command; write nothing"""


def main(argv: Optional[List[str]] = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if "-h" in args or "--help" in args:
        print(USAGE)
        return 0
    positional: List[str] = []
    out: Optional[str] = None
    pip_args: List[str] = []
    check = True
    only_validate = False
    try:
        i = 0
        while i < len(args):
            arg = args[i]
            if arg.startswith("--out"):
                out = arg.split("=", 1)[1] if "=" in arg else args[i + 1]
                i += 0 if "=" in arg else 1
            elif arg.startswith("--pip-arg"):
                pip_args.append(arg.split("=", 1)[1] if "=" in arg else args[i + 1])
                i += 0 if "=" in arg else 1
            elif arg == "--no-start-check":
                check = False
            elif arg == "--check":
                only_validate = True
            elif arg.startswith("-"):
                raise PackError("PACK_USAGE", f"unknown option {arg}")
            else:
                positional.append(arg)
            i += 1
        if len(positional) > 1:
            raise PackError("PACK_USAGE", "give at most one project folder")
        if only_validate:
            validate(positional[0] if positional else ".")
        else:
            pack(positional[0] if positional else ".", out, pip_args, check=check)
        return 0
    except IndexError:
        print(PackError("PACK_USAGE", "an option lacks its value").render(), file=sys.stderr)
        return 2
    except PackError as error:
        print(error.render(), file=sys.stderr)
        return 2 if error.code == "PACK_USAGE" else 1


if __name__ == "__main__":
    sys.exit(main())
