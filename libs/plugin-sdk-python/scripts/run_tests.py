"""Runs the SDK's unittest suite and writes the counts `npm test` sums.

    python3 scripts/run_tests.py [--report reports/counts/plugin-sdk-python.json]

The suite runs with this interpreter and, when one is installed, with CPython 3.9 too (the oldest
version the SDK supports). Each vector case is checked as a subtest and counted as one check. Prints
"N passed, N failed" last and exits 1 on any failure.
"""

import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class CountingResult(unittest.TextTestResult):
    """Counts tests, and each subtest as a check of its own."""

    def __init__(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        super().__init__(*args, **kwargs)
        self.checks_passed = 0
        self.checks_failed = 0
        self._had_subtests = set()

    def addSubTest(self, test, subtest, err):  # type: ignore[no-untyped-def]
        super().addSubTest(test, subtest, err)
        self._had_subtests.add(test.id())
        if err is None:
            self.checks_passed += 1
        else:
            self.checks_failed += 1

    def addSuccess(self, test):  # type: ignore[no-untyped-def]
        super().addSuccess(test)
        if test.id() not in self._had_subtests:
            self.checks_passed += 1

    def addFailure(self, test, err):  # type: ignore[no-untyped-def]
        super().addFailure(test, err)
        self.checks_failed += 1

    def addError(self, test, err):  # type: ignore[no-untyped-def]
        super().addError(test, err)
        self.checks_failed += 1


def run_here() -> dict:
    sys.path.insert(0, ROOT)
    os.environ["PYTHONDONTWRITEBYTECODE"] = "1"
    sys.dont_write_bytecode = True
    suite = unittest.defaultTestLoader.discover(os.path.join(ROOT, "tests"), top_level_dir=ROOT)
    runner = unittest.TextTestRunner(resultclass=CountingResult, verbosity=1, stream=sys.stderr)
    result = runner.run(suite)
    return {"passed": result.checks_passed, "failed": result.checks_failed, "skipped": len(result.skipped)}


def oldest_supported() -> str:
    """A working CPython 3.9 interpreter, if this machine has one (a pyenv shim may exist without it)."""
    candidates = sorted(glob.glob(os.path.expanduser("~/.pyenv/versions/3.9*/bin/python3")), reverse=True)
    for name in ("python3.9",):
        found = shutil.which(name)
        if found:
            candidates.append(found)
    for candidate in candidates:
        try:
            out = subprocess.run([candidate, "-c", "import sys; print(sys.version_info[:2] == (3, 9))"], capture_output=True, text=True, timeout=20)
        except (OSError, subprocess.TimeoutExpired):
            continue
        if out.returncode == 0 and out.stdout.strip() == "True":
            return candidate
    return ""


def main(argv: list) -> int:
    report = argv[argv.index("--report") + 1] if "--report" in argv else None
    if "--child" in argv:
        counts = run_here()
        with open(argv[argv.index("--child") + 1], "w", encoding="utf-8") as handle:
            json.dump(counts, handle)
        return 0
    version = ".".join(map(str, sys.version_info[:2]))
    print(f"== host_sdk_v2 tests on Python {version}", file=sys.stderr)
    totals = run_here()
    other = oldest_supported()
    if other and sys.version_info[:2] != (3, 9):
        print(f"== host_sdk_v2 tests on Python 3.9 ({other})", file=sys.stderr)
        out = os.path.join(tempfile.mkdtemp(), "counts.json")
        code = subprocess.call([other, os.path.abspath(__file__), "--child", out], cwd=ROOT)
        if code != 0 or not os.path.exists(out):
            totals["failed"] += 1
        else:
            with open(out, encoding="utf-8") as handle:
                child = json.load(handle)
            for key in totals:
                totals[key] += child[key]
    else:
        print("== CPython 3.9 is not installed here: the suite ran on one version only", file=sys.stderr)
    if report:
        os.makedirs(os.path.dirname(os.path.abspath(report)), exist_ok=True)
        with open(report, "w", encoding="utf-8") as handle:
            json.dump(totals, handle)
    print(f"{totals['passed']} passed, {totals['failed']} failed" + (f", {totals['skipped']} skipped" if totals["skipped"] else ""))
    return 1 if totals["failed"] else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
