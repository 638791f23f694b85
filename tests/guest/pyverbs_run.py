#!/usr/bin/env python3
"""Runs rdma-core's pyverbs test files in one process and prints one line per test.

Usage: pyverbs_run.py DRIVER IBDEV TESTDIR FILE...

TESTDIR is a writable copy of rdma-core's tests package (`tests/` inside it, as
tests/guest/pyverbs-lib.sh prepares it); FILE is a module name such as `test_qp`.
One process for every file: Python and pyverbs start once (seconds in the TCG guest),
and the package's `__init__` imports only the test files present in the copy.

Output, one line per test (the id is unittest's, `tests.test_qp.QPTest.test_x`, which
rdma-core's `-v` output does not show when a test has a docstring):
    PYV <driver> <outcome> <secs> <id> [<reason>]
outcome: ok, skip, fail, error (unittest's expected failure counts as ok, an
unexpected success as fail). Then one line per file:
    PYVERBS <driver> <file> run=N ok=N skip=N fail=N error=N secs=S
A test still running after $PYVERBS_TEST_TIMEOUT seconds (default 400) is
interrupted (SIGALRM) and counts as an error. rdma-core's wait for a completion
(`tests.utils.POLL_CQ_TIMEOUT`, 10 s) is set to $PYVERBS_POLL_CQ_TIMEOUT seconds
(default 1): the emulator has no data path yet, so no completion comes, and each test
that waits for one (8 per driver) errors ~9 s sooner, on both drivers alike. Exit
status 0 once every file ran, whatever the outcomes (tests/guest/pyverbs_compare.py
judges them).

pyverbs draws some attributes at random (QP caps, UD create flags such as
BLOCK_SELF_MCAST_LB, which neither driver serves here: EOPNOTSUPP, the test skips).
Each test starts from Python's random generator seeded with a hash of its id, so both
drivers get the same draws and a run repeats the one before: the outcomes compare.
"""
import importlib
import os
import random
import signal
import sys
import time
import unittest
import zlib

PER_TEST = int(os.environ.get("PYVERBS_TEST_TIMEOUT", "400"))
POLL_CQ = float(os.environ.get("PYVERBS_POLL_CQ_TIMEOUT", "1"))


class TestTimeout(Exception):
    """Raised in a test by SIGALRM."""


def on_alarm(_sig, _frame):
    raise TestTimeout(f"still running after {PER_TEST} s")


def reason_of(err):
    """First line of an exception's message, made one console line."""
    if isinstance(err, str):
        text = err
    else:
        text = f"{err[0].__name__}: {err[1]}"
    text = " ".join(text.split())
    return text[:160]


def test_id(test):
    tid = getattr(test, "id", None)
    return tid() if callable(tid) else str(test)


class LineResult(unittest.TestResult):
    """Prints each test's outcome as it ends; keeps the counts per file."""

    def __init__(self, driver, counts):
        super().__init__()
        self.driver = driver
        self.counts = counts
        self.t0 = time.monotonic()

    def startTest(self, test):
        super().startTest(test)
        random.seed(zlib.crc32(test_id(test).encode()))
        self.t0 = time.monotonic()
        signal.alarm(PER_TEST)

    def stopTest(self, test):
        signal.alarm(0)
        super().stopTest(test)

    def emit(self, test, outcome, reason=""):
        secs = time.monotonic() - self.t0
        self.counts[outcome] = self.counts.get(outcome, 0) + 1
        self.counts["run"] = self.counts.get("run", 0) + 1
        line = f"PYV {self.driver} {outcome} {secs:.2f} {test_id(test)}"
        if reason:
            line += f" {reason}"
        print(line, flush=True)

    def addSuccess(self, test):
        super().addSuccess(test)
        self.emit(test, "ok")

    def addExpectedFailure(self, test, err):
        super().addExpectedFailure(test, err)
        self.emit(test, "ok", "(expected failure)")

    def addUnexpectedSuccess(self, test):
        super().addUnexpectedSuccess(test)
        self.emit(test, "fail", "unexpected success")

    def addSkip(self, test, reason):
        super().addSkip(test, reason)
        self.emit(test, "skip", reason_of(reason))

    def addFailure(self, test, err):
        super().addFailure(test, err)
        self.emit(test, "fail", reason_of(err))

    def addError(self, test, err):
        super().addError(test, err)
        self.emit(test, "error", reason_of(err))

    def addSubTest(self, test, subtest, err):
        super().addSubTest(test, subtest, err)
        if err is not None:
            failed = issubclass(err[0], test.failureException)
            self.emit(subtest, "fail" if failed else "error", reason_of(err))


def main():
    if len(sys.argv) < 5:
        print(__doc__, file=sys.stderr)
        return 2
    driver, ibdev, testdir, files = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
    # rdma-core's test files import `args_parser` from their own directory and the
    # rest as the package `tests`.
    sys.path[:0] = [testdir, os.path.join(testdir, "tests")]
    from args_parser import parser  # noqa: E402 (path set above)
    import tests.utils  # noqa: E402

    # Read by its poll loops at each call, so the test files see the new value; the
    # mlx5 files poll through mlx5_base, which has its own (5 s).
    tests.utils.POLL_CQ_TIMEOUT = POLL_CQ
    if any(f.startswith("test_mlx5_") for f in files):
        import tests.mlx5_base  # noqa: E402

        tests.mlx5_base.POLL_CQ_TIMEOUT = min(POLL_CQ, tests.mlx5_base.POLL_CQ_TIMEOUT)

    sys.argv = [sys.argv[0], "--dev", ibdev]
    parser.parse_args()
    signal.signal(signal.SIGALRM, on_alarm)
    loader = unittest.TestLoader()
    for f in files:
        counts = {}
        t0 = time.monotonic()
        try:
            suite = loader.loadTestsFromModule(importlib.import_module("tests." + f))
        except Exception as e:  # an import error is that file's result
            print(f"PYV {driver} error 0.00 tests.{f} import failed: {reason_of(str(e))}")
            counts = {"run": 1, "error": 1}
            suite = None
        if suite is not None:
            suite.run(LineResult(driver, counts))
        print(
            f"PYVERBS {driver} {f} run={counts.get('run', 0)} ok={counts.get('ok', 0)}"
            f" skip={counts.get('skip', 0)} fail={counts.get('fail', 0)}"
            f" error={counts.get('error', 0)} secs={time.monotonic() - t0:.0f}",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
