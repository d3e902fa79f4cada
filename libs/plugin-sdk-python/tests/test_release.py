"""The release archive, tried as a new user would: unzip it and follow its README to a packed plugin."""

import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest
import zipfile

from host_sdk_v2._version import SDK_VERSION

from .support import SDK_ROOT

sys.path.insert(0, os.path.join(SDK_ROOT, "scripts"))
import build_release  # noqa: E402
import host_sdk_build  # noqa: E402


class ReleaseArchiveTest(unittest.TestCase):
    def setUp(self) -> None:
        self.work = tempfile.mkdtemp(prefix="release-test-")

    def tearDown(self) -> None:
        shutil.rmtree(self.work, ignore_errors=True)

    def test_the_archive_is_reproducible_and_its_readme_steps_give_a_packed_plugin(self) -> None:
        first = build_release.build(os.path.join(self.work, "one"))
        second = build_release.build(os.path.join(self.work, "two"))
        self.assertEqual(os.path.basename(first), f"SDK-V2-Python-{SDK_VERSION}.zip")
        with open(first, "rb") as a, open(second, "rb") as b:
            self.assertEqual(a.read(), b.read())
        with zipfile.ZipFile(first) as archive:
            names = archive.namelist()
            archive.extractall(self.work)
        top = f"SDK-V2-Python-{SDK_VERSION}/"
        for expected in (
            "README.md",
            f"packages/host_sdk_v2-{SDK_VERSION}-py3-none-any.whl",
            f"packages/host_sdk_v2-{SDK_VERSION}.tar.gz",
            "samples/echo/plugin.py",
            "schema/manifest.schema.json",
        ):
            self.assertIn(top + expected, names)
        # The SDK comes only from what pip installs: no loose copy an import could pick up instead.
        self.assertFalse([n for n in names if n.startswith(top + "host_sdk_v2/")])
        self.assertFalse([n for n in names if "__pycache__" in n or n.endswith(".pyc")])

        with open(os.path.join(SDK_ROOT, "README.md"), encoding="utf-8") as handle:
            readme = handle.read()
        block = re.search(r"## From the release archive.*?```sh\n(.*?)```", readme, re.S).group(1)  # type: ignore[union-attr]
        commands = [line.split("#")[0].strip() for line in block.strip().splitlines()]
        env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
        env["PYTHONDONTWRITEBYTECODE"] = "1"
        run = subprocess.run(" && ".join(commands), shell=True, cwd=self.work, env=env, capture_output=True, text=True, timeout=120)
        self.assertEqual(run.returncode, 0, run.stdout + run.stderr)
        # Every link of the archive's README leads to a file of the archive or to a web page.
        with open(os.path.join(self.work, top, "README.md"), encoding="utf-8") as handle:
            released = handle.read()
        for target in re.findall(r"\]\(([^)\s]+)\)", released):
            path = target.split("#")[0]
            if path and not path.startswith(("https://", "http://")):
                self.assertTrue(os.path.exists(os.path.join(self.work, top, path)), f"the README links to {target}, which the archive lacks")
        # The steps ran the installed SDK: the environment's host_sdk_v2, in the version of the archive.
        show = subprocess.run(
            [os.path.join(self.work, "plugin-env", "bin", "python"), "-m", "pip", "show", "-f", "host-sdk-v2"],
            cwd=self.work, env=env, capture_output=True, text=True, timeout=120,
        )
        self.assertIn(f"Version: {SDK_VERSION}", show.stdout, show.stderr)
        self.assertIn("host_sdk_v2/pack.py", show.stdout)
        packed = os.path.join(self.work, top, "samples", "echo", "artifacts", "com.example.echo.zip")
        with zipfile.ZipFile(packed) as plugin_zip:
            self.assertIn("host_sdk_v2/stdio.py", plugin_zip.namelist())
            self.assertNotIn("tests/test_plugin.py", plugin_zip.namelist())


    def test_links_leaving_the_sdk_folder_name_the_repository_file(self) -> None:
        self.assertEqual(
            host_sdk_build.unlink_repository(
                "as [http-signing.md](../../docs/protocol/http-signing.md#headers) says; [pack](host_sdk_v2/pack.py); [docs/protocol/v2.md](../../docs/protocol/v2.md)"
            ),
            "as http-signing.md (`docs/protocol/http-signing.md` in the host's repository) says; [pack](host_sdk_v2/pack.py);"
            " `docs/protocol/v2.md` in the host's repository",
        )


if __name__ == "__main__":
    unittest.main()
