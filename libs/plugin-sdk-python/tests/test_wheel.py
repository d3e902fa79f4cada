"""The SDK as a Python distribution: the wheel and the sdist the PEP 517 backend writes, installed offline
into fresh virtual environments and used there with no path to this checkout."""

import base64
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import unittest
import zipfile

from host_sdk_v2._version import SDK_VERSION

from .support import SDK_ROOT

sys.path.insert(0, os.path.join(SDK_ROOT, "scripts"))
import host_sdk_build  # noqa: E402

WHEEL = f"host_sdk_v2-{SDK_VERSION}-py3-none-any.whl"
SDIST = f"host_sdk_v2-{SDK_VERSION}.tar.gz"

MANIFEST = {
    "pluginId": "com.example.wheel",
    "name": "Wheel",
    "version": "1.0.0",
    "author": "Example",
    "protocolVersion": 2,
    "sdkVersion": SDK_VERSION,
    "transport": {"type": "stdio-jsonrpc", "stdio": {"command": "python3", "args": ["plugin.py", "--host-stdio"]}},
    "eventSubscriptions": [{"eventType": "message.created"}],
    "permissions": ["messages.reply"],
    "commands": [{"name": "echo", "prefixes": ["/"]}],
}

PLUGIN = '''from host_sdk_v2 import Plugin

plugin = Plugin.from_manifest("manifest.json")


@plugin.command("echo")
def echo(ctx):
    ctx.reply("echo: ", ctx.args)


if __name__ == "__main__":
    plugin.run()
'''

CHECK = '''import json, host_sdk_v2
from host_sdk_v2.testing import TestHost
from plugin import plugin
delivery = TestHost(plugin).send("/echo from the wheel")
print(json.dumps({"file": host_sdk_v2.__file__, "body": delivery.replies[0].body}))
'''


def clean_env():
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "PIP_FIND_LINKS", "PIP_INDEX_URL")}
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    return env


class WheelTest(unittest.TestCase):
    def setUp(self) -> None:
        self.work = tempfile.mkdtemp(prefix="wheel-test-")

    def tearDown(self) -> None:
        shutil.rmtree(self.work, ignore_errors=True)

    def run_ok(self, args, cwd=None, timeout=300):
        done = subprocess.run(args, cwd=cwd or self.work, env=clean_env(), capture_output=True, text=True, timeout=timeout)
        self.assertEqual(done.returncode, 0, f"{args}\n{done.stdout}{done.stderr}")
        return done.stdout

    def venv(self, name: str) -> str:
        """A fresh virtual environment without pip; this interpreter's pip installs into it (--python)."""
        folder = os.path.join(self.work, name)
        self.run_ok([sys.executable, "-m", "venv", "--without-pip", folder])
        return os.path.join(folder, "bin", "python")

    def pip_install(self, python: str, *what: str) -> None:
        self.run_ok([sys.executable, "-m", "pip", "--python", python, "install", "--no-index", "--no-cache-dir", *what])

    def project(self) -> str:
        folder = os.path.join(self.work, "plugin")
        os.makedirs(folder)
        with open(os.path.join(folder, "manifest.json"), "w", encoding="utf-8") as out:
            json.dump(MANIFEST, out)
        with open(os.path.join(folder, "plugin.py"), "w", encoding="utf-8") as out:
            out.write(PLUGIN)
        return folder

    def test_both_are_reproducible_and_the_wheel_records_every_file(self) -> None:
        first = host_sdk_build.build_both(os.path.join(self.work, "one"))
        second = host_sdk_build.build_both(os.path.join(self.work, "two"))
        self.assertEqual([os.path.basename(p) for p in first], [WHEEL, SDIST])
        for a, b in zip(first, second):
            with open(a, "rb") as x, open(b, "rb") as y:
                self.assertEqual(x.read(), y.read(), os.path.basename(a))

        with zipfile.ZipFile(first[0]) as wheel:
            names = wheel.namelist()
            info = f"host_sdk_v2-{SDK_VERSION}.dist-info/"
            metadata = wheel.read(info + "METADATA").decode("utf-8")
            record = wheel.read(info + "RECORD").decode("utf-8").splitlines()
            for line in record:
                name, digest, size = line.rsplit(",", 2)
                if name == info + "RECORD":
                    self.assertEqual((digest, size), ("", ""))
                    continue
                data = wheel.read(name)
                expected = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode("ascii")
                self.assertEqual((digest, int(size)), (f"sha256={expected}", len(data)), name)
            self.assertEqual(sorted(line.rsplit(",", 2)[0] for line in record), sorted(names))
        shipped = sorted(n for n in names if n.startswith("host_sdk_v2/"))
        self.assertEqual(shipped, [name for name, _ in host_sdk_build.package_files()])
        self.assertIn("host_sdk_v2/py.typed", shipped)
        self.assertIn("host_sdk_v2/_generated/wire.py", shipped)
        self.assertFalse([n for n in names if "__pycache__" in n or n.endswith(".pyc")])
        self.assertIn("Name: host-sdk-v2\n", metadata)
        self.assertIn(f"Version: {SDK_VERSION}\n", metadata)
        self.assertIn("Requires-Python: >=3.9\n", metadata)

        with tarfile.open(first[1]) as sdist:
            top = f"host_sdk_v2-{SDK_VERSION}/"
            members = sdist.getnames()
            for expected in ("pyproject.toml", "PKG-INFO", "README.md", "scripts/host_sdk_build.py", "host_sdk_v2/__init__.py"):
                self.assertIn(top + expected, members)
            self.assertEqual({m.mtime for m in sdist.getmembers()}, {host_sdk_build.FIXED_EPOCH})

    def test_the_installed_wheel_runs_a_plugin_and_packs_it_with_the_sdk_vendored(self) -> None:
        wheel = host_sdk_build.build_both(os.path.join(self.work, "dist"))[0]
        python = self.venv("env")
        self.pip_install(python, wheel)
        project = self.project()
        seen = json.loads(self.run_ok([python, "-c", CHECK], cwd=project))
        self.assertTrue(seen["file"].startswith(os.path.join(self.work, "env")), seen["file"])
        self.assertEqual(seen["body"], {"msg_type": 0, "content": "echo: from the wheel"})

        # The packer of the installed SDK copies that SDK into the plugin ZIP (the host runs it without pip).
        self.run_ok([python, "-m", "host_sdk_v2.pack"], cwd=project)
        with zipfile.ZipFile(os.path.join(project, "artifacts", "com.example.wheel.zip")) as packed:
            names = packed.namelist()
        self.assertIn("host_sdk_v2/stdio.py", names)
        self.assertIn("host_sdk_v2/_generated/catalog.py", names)
        # Every module of the package travels, those of its subpackages (_stdio, _generated) included.
        modules = [name for name, _ in host_sdk_build.package_files() if name.endswith(".py")]
        self.assertIn("host_sdk_v2/_stdio/transport.py", modules)
        self.assertEqual([name for name in modules if name not in names], [])
        self.assertFalse([n for n in names if ".dist-info/" in n or "__pycache__" in n])

    def test_the_sdist_builds_and_installs_offline(self) -> None:
        sdist = host_sdk_build.build_both(os.path.join(self.work, "dist"))[1]
        python = self.venv("env")
        # pip builds the wheel from the sdist with the backend inside it: nothing to download.
        self.pip_install(python, sdist)
        shown = self.run_ok([python, "-c", "import host_sdk_v2._version as v, host_sdk_v2; print(v.SDK_VERSION, host_sdk_v2.__file__)"])
        version, path = shown.split()
        self.assertEqual(version, SDK_VERSION)
        self.assertTrue(path.startswith(os.path.join(self.work, "env")), path)

    def test_the_build_script_refuses_a_wrong_command_line(self) -> None:
        script = os.path.join(SDK_ROOT, "scripts", "host_sdk_build.py")
        done = subprocess.run([sys.executable, script, "--out"], env=clean_env(), capture_output=True, text=True, timeout=60)
        self.assertEqual(done.returncode, 2)
        self.assertIn("usage: python3 scripts/host_sdk_build.py [--out <folder>]", done.stderr)


if __name__ == "__main__":
    unittest.main()
