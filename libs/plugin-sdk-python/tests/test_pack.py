"""The packer: reproducible ZIPs with the vendored SDK and dependencies, and refusals of packages that
would not start. Dependencies come from wheels built here (no package index is reachable)."""

import base64
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest
import zipfile
from typing import Dict, List

from host_sdk_v2.pack import PACK_ERRORS, PYTHON_PACK_CODES, PackError, pack, validate

from .support import FIXTURES, SDK_ROOT, fixture_env

ECHO = os.path.join(FIXTURES, "echo")


def build_wheel(folder: str, name: str, version: str, files: Dict[str, str]) -> str:
    """A minimal pure-Python wheel (PEP 427), written by hand."""
    dist = f"{name}-{version}.dist-info"
    contents = dict(files)
    contents[f"{dist}/METADATA"] = f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"
    contents[f"{dist}/WHEEL"] = "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    contents[f"{dist}/top_level.txt"] = "\n".join(sorted({p.split("/")[0] for p in files})) + "\n"
    record = []
    for path, text in contents.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=").decode()
        record.append(f"{path},sha256={digest},{len(text.encode())}")
    record.append(f"{dist}/RECORD,,")
    contents[f"{dist}/RECORD"] = "\n".join(record) + "\n"
    path = os.path.join(folder, f"{name}-{version}-py3-none-any.whl")
    with zipfile.ZipFile(path, "w") as wheel:
        for entry, text in sorted(contents.items()):
            wheel.writestr(entry, text)
    return path


class PackTest(unittest.TestCase):
    def setUp(self) -> None:
        self.root = tempfile.mkdtemp(prefix="pack-test-")
        self.project = os.path.join(self.root, "plugin")
        shutil.copytree(ECHO, self.project)
        self.logs: List[str] = []

    def tearDown(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)

    def manifest(self, change) -> None:  # type: ignore[no-untyped-def]
        path = os.path.join(self.project, "manifest.json")
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
        change(data)
        with open(path, "w", encoding="utf-8") as handle:
            json.dump(data, handle)

    def pack(self, **options) -> str:  # type: ignore[no-untyped-def]
        return pack(self.project, log=self.logs.append, **options)

    def refused(self, **options) -> PackError:  # type: ignore[no-untyped-def]
        with self.assertRaises(PackError) as raised:
            self.pack(**options)
        self.assertIn(raised.exception.code, PACK_ERRORS)
        return raised.exception

    def test_two_packs_are_byte_identical_sorted_and_without_bytecode(self) -> None:
        os.makedirs(os.path.join(self.project, "__pycache__"))
        with open(os.path.join(self.project, "__pycache__", "plugin.cpython-311.pyc"), "wb") as handle:
            handle.write(b"\0")
        first = self.pack()
        with open(first, "rb") as handle:
            one = handle.read()
        os.utime(os.path.join(self.project, "plugin.py"), (1, 1))
        second = self.pack()
        with open(second, "rb") as handle:
            self.assertEqual(handle.read(), one)
        with zipfile.ZipFile(first) as archive:
            names = archive.namelist()
            self.assertEqual(names, sorted(names))
            self.assertIn("manifest.json", names)
            self.assertIn("plugin.py", names)
            self.assertIn("host_sdk_v2/__init__.py", names)
            self.assertIn("host_sdk_v2/_generated/wire.py", names)
            self.assertFalse([n for n in names if "__pycache__" in n or n.endswith(".pyc")])
            self.assertEqual({i.date_time for i in archive.infolist()}, {(1980, 1, 1, 0, 0, 0)})

    def test_dependencies_from_requirements_are_installed_into_the_package(self) -> None:
        wheels = os.path.join(self.root, "wheels")
        os.makedirs(wheels)
        build_wheel(wheels, "greetlib", "1.0.0", {"greetlib/__init__.py": "def greet(name):\n    return 'hello ' + name\n"})
        with open(os.path.join(self.project, "requirements.txt"), "w", encoding="utf-8") as handle:
            handle.write("# the greeting library\ngreetlib==1.0.0\n")
        with open(os.path.join(self.project, "plugin.py"), "a", encoding="utf-8") as handle:
            handle.write("\nimport greetlib  # noqa: E402\n")
        path = self.pack(pip_args=["--no-index", f"--find-links={wheels}"])
        with zipfile.ZipFile(path) as archive:
            names = archive.namelist()
        self.assertIn("greetlib/__init__.py", names)
        self.assertIn("greetlib-1.0.0.dist-info/METADATA", names)
        self.assertFalse([n for n in names if n.startswith("bin/")])

    def test_a_dependency_that_does_not_import_is_refused(self) -> None:
        wheels = os.path.join(self.root, "wheels")
        os.makedirs(wheels)
        build_wheel(wheels, "brokenlib", "1.0.0", {"brokenlib/__init__.py": "import not_installed_anywhere\n"})
        with open(os.path.join(self.project, "requirements.txt"), "w", encoding="utf-8") as handle:
            handle.write("brokenlib\n")
        error = self.refused(pip_args=["--no-index", f"--find-links={wheels}"])
        self.assertEqual(error.code, "PACK_DEPENDENCY_UNRESOLVED")
        self.assertIn("not_installed_anywhere", "\n".join(error.details))

    def test_a_requirement_pip_cannot_install_is_refused(self) -> None:
        with open(os.path.join(self.project, "requirements.txt"), "w", encoding="utf-8") as handle:
            handle.write("no-such-package-anywhere==9.9.9\n")
        self.assertEqual(self.refused(pip_args=["--no-index"]).code, "PACK_DEPENDENCY_INSTALL_FAILED")

    def test_args_without_host_stdio_are_refused(self) -> None:
        self.manifest(lambda m: m["transport"]["stdio"].update(args=["plugin.py"]))
        self.assertEqual(self.refused().code, "PACK_HOST_STDIO_MISSING")

    def test_a_missing_entry_script_is_refused(self) -> None:
        self.manifest(lambda m: m["transport"]["stdio"].update(args=["main.py", "--host-stdio"]))
        self.assertEqual(self.refused().code, "PACK_ENTRY_MISSING")

    def test_an_invalid_manifest_is_refused_with_every_issue(self) -> None:
        self.manifest(lambda m: m.update(pluginId="Bad Id"))
        error = self.refused()
        self.assertEqual(error.code, "PACK_MANIFEST_INVALID")
        self.assertIn("manifest.pluginId.invalid", error.details[0])

    def test_a_plugin_that_fails_at_start_is_refused(self) -> None:
        with open(os.path.join(self.project, "plugin.py"), "w", encoding="utf-8") as handle:
            handle.write("raise SystemExit('cannot start: missing configuration')\n")
        error = self.refused()
        self.assertEqual(error.code, "PACK_START_FAILED")
        self.assertIn("cannot start", "\n".join(error.details))

    def test_without_pip_a_package_with_requirements_gets_a_clear_error(self) -> None:
        venv = os.path.join(self.root, "nopip")
        created = subprocess.run([sys.executable, "-m", "venv", "--without-pip", venv], capture_output=True)
        if created.returncode != 0:
            self.skipTest(f"cannot create a venv here: {created.stderr[-200:]!r}")
        python = os.path.join(venv, "bin", "python")
        with open(os.path.join(self.project, "requirements.txt"), "w", encoding="utf-8") as handle:
            handle.write("anything\n")
        run = subprocess.run([python, "-m", "host_sdk_v2.pack", self.project], capture_output=True, text=True, env=fixture_env())
        self.assertEqual(run.returncode, 1)
        self.assertIn("error PACK_TOOL_MISSING", run.stderr)

    def test_the_command_line_reports_usage_errors(self) -> None:
        run = subprocess.run([sys.executable, "-m", "host_sdk_v2.pack", "--bogus"], capture_output=True, text=True, env=fixture_env())
        self.assertEqual(run.returncode, 2)
        self.assertIn("error PACK_USAGE", run.stderr)

    def test_a_missing_manifest_is_refused(self) -> None:
        os.unlink(os.path.join(self.project, "manifest.json"))
        self.assertEqual(self.refused().code, "PACK_MANIFEST_MISSING")

    def test_a_manifest_that_is_not_json_is_refused(self) -> None:
        with open(os.path.join(self.project, "manifest.json"), "w", encoding="utf-8") as handle:
            handle.write('{"pluginId": "com.example.echo",}')
        self.assertEqual(self.refused().code, "PACK_MANIFEST_INVALID")

    def test_an_http_plugin_manifest_is_refused(self) -> None:
        self.manifest(lambda m: (m.pop("transport"), m.update(capabilities=1)))
        self.assertEqual(self.refused().code, "PACK_TRANSPORT_NOT_STDIO")

    def test_absolute_paths_are_refused(self) -> None:
        self.manifest(lambda m: m["transport"]["stdio"].update(args=[os.path.join(self.project, "plugin.py"), "--host-stdio"]))
        self.assertEqual(self.refused().code, "PACK_ABSOLUTE_PATH")

    def test_a_working_directory_outside_the_package_is_refused(self) -> None:
        self.manifest(lambda m: m["transport"]["stdio"].update(workingDirectory=".."))
        self.assertEqual(self.refused().code, "PACK_WORKDIR_OUTSIDE")

    def test_a_working_directory_that_does_not_exist_is_refused(self) -> None:
        self.manifest(lambda m: m["transport"]["stdio"].update(workingDirectory="build"))
        self.assertEqual(self.refused().code, "PACK_WORKDIR_MISSING")

    def test_an_sdk_version_other_than_the_packed_one_is_a_warning(self) -> None:
        self.manifest(lambda m: m.update(sdkVersion="0.0.1"))
        validate(self.project, log=self.logs.append)
        self.assertTrue(any(line.startswith("warning PACK_SDK_VERSION_MISMATCH:") for line in self.logs), self.logs)

    def test_an_output_folder_that_cannot_be_written_is_refused(self) -> None:
        with open(os.path.join(self.root, "a-file"), "w", encoding="utf-8") as handle:
            handle.write("not a folder")
        error = self.refused(out_dir=os.path.join(self.root, "a-file", "out"), check=False)
        self.assertEqual(error.code, "PACK_OUTPUT_NOT_WRITABLE")

    def test_every_code_is_a_packaging_code_of_the_catalogue(self) -> None:
        self.assertEqual([c for c in PYTHON_PACK_CODES if c not in PACK_ERRORS], [])
        with self.assertRaises(ValueError):
            PackError("PACK_PIP_MISSING", "an old code")

    def test_the_readme_lists_every_packer_error_and_no_other(self) -> None:
        with open(os.path.join(SDK_ROOT, "README.md"), encoding="utf-8") as handle:
            listed = {line.split("`")[1] for line in handle if line.startswith("| `PACK_")}
        self.assertEqual(listed, set(PYTHON_PACK_CODES))


if __name__ == "__main__":
    unittest.main()
