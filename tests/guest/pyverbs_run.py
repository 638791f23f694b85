#!/usr/bin/env python3
"""Runs rdma-core's pyverbs test files in one process and prints one line per test.

Usage: pyverbs_run.py DRIVER IBDEV TESTDIR FILE...

TESTDIR is a writable copy of rdma-core's tests package (`tests/` inside it, as
tests/guest/pyverbs-lib.sh prepares it); FILE is a module name such as `test_qp`.
Python and pyverbs start once (seconds in the TCG guest), and the package's `__init__`
imports only the test files present in the copy; each file then runs in a child of that
process (fork), so what one file leaves behind cannot reach the next: pyverbs can
destroy an object after the context it belongs to was closed and freed (an object
outliving its context when a close fails or the garbage collector tears a cycle down
in its own order), a use after free that reads freed memory (an EBADF on stderr) or,
when the heap shrank, kills the process (SIGSEGV in ibv_destroy_cq: the soak run of
2026-12-05 lost 10 of 27 files on mlx5_rs that way). A child that dies reports its
running test and the ones it did not reach as errors naming the signal, and the next
file runs. Each test is marked on stderr (`--- <id>`) so its messages can be traced.

Output, one line per test (the id is unittest's, `tests.test_qp.QPTest.test_x`, which
rdma-core's `-v` output does not show when a test has a docstring):
    PYV <driver> <outcome> <secs> <id> [<reason>]
outcome: ok, skip, fail, error (unittest's expected failure counts as ok, an
unexpected success as fail). Then one line per file:
    PYVERBS <driver> <file> run=N ok=N skip=N fail=N error=N secs=S
$PYVERBS_EXCLUDE, a list of test ids separated by blanks, leaves those tests out (they
print nothing; the scenario runs them in another set). A test still running after
$PYVERBS_TEST_TIMEOUT seconds (default 400) is
interrupted (SIGALRM) and counts as an error. rdma-core's wait for a completion
(`tests.utils.POLL_CQ_TIMEOUT`, 10 s) is set to $PYVERBS_POLL_CQ_TIMEOUT seconds
(default 1): the emulator completes a work request within milliseconds even under
TCG, so a second is ample where a completion is due, and a test whose completion never
comes (a driver that does not move the data yet) errors ~9 s sooner, on both drivers
alike. Exit
status 0 once every file ran, whatever the outcomes (tests/guest/pyverbs_compare.py
judges them).

pyverbs draws some attributes at random (QP caps, UD create flags such as
BLOCK_SELF_MCAST_LB, which both drivers take with the emulator's cap block_lb_mc).
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
EXCLUDE = set(os.environ.get("PYVERBS_EXCLUDE", "").split())


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
    """Prints each test's outcome as it ends and reports it to the parent (run_file)."""

    def __init__(self, driver, report):
        super().__init__()
        self.driver = driver
        self.report = report  # `start <id>` and `<outcome> <id>` lines, to the parent
        self.t0 = time.monotonic()

    def startTest(self, test):
        super().startTest(test)
        print(f"--- {test_id(test)}", file=sys.stderr, flush=True)
        self.report.write(f"start {test_id(test)}\n")
        self.report.flush()
        random.seed(zlib.crc32(test_id(test).encode()))
        self.t0 = time.monotonic()
        signal.alarm(PER_TEST)

    def stopTest(self, test):
        signal.alarm(0)
        super().stopTest(test)

    def emit(self, test, outcome, reason=""):
        secs = time.monotonic() - self.t0
        line = f"PYV {self.driver} {outcome} {secs:.2f} {test_id(test)}"
        if reason:
            line += f" {reason}"
        print(line, flush=True)
        self.report.write(f"{outcome} {test_id(test)}\n")
        self.report.flush()

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


def ids_of(suite):
    """The ids of a suite's tests, in the order it runs them."""
    for t in suite:
        if isinstance(t, unittest.TestSuite):
            yield from ids_of(t)
        else:
            yield test_id(t)


def without_excluded(suite):
    """The suite without the tests of $PYVERBS_EXCLUDE."""
    kept = unittest.TestSuite()
    for t in suite:
        if isinstance(t, unittest.TestSuite):
            kept.addTest(without_excluded(t))
        elif test_id(t) not in EXCLUDE:
            kept.addTest(t)
    return kept


def run_file(driver, suite, counts):
    """Runs one file's suite in a child process; counts its outcomes into `counts`.
    A child that dies (a signal, or an exit other than 0) has its running test and
    the ones it did not reach reported as errors."""
    ids = list(ids_of(suite))
    r, w = os.pipe()
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        code = 0
        try:
            with os.fdopen(w, "w") as report:
                suite.run(LineResult(driver, report))
        except BaseException as e:  # noqa: BLE001 (the parent reports it)
            print(f"pyverbs_run: {reason_of(str(e))}", file=sys.stderr)
            code = 1
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(code)
    os.close(w)
    started, ended = [], set()
    with os.fdopen(r) as report:
        for line in report:
            what, _, tid = line.rstrip("\n").partition(" ")
            if what == "start":
                started.append(tid)
            elif what in ("ok", "skip", "fail", "error"):
                ended.add(tid)
                counts[what] = counts.get(what, 0) + 1
                counts["run"] = counts.get("run", 0) + 1
    _, status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(status):
        death = f"the file's process died of {signal.Signals(os.WTERMSIG(status)).name}"
    elif os.WEXITSTATUS(status) != 0:
        death = f"the file's process exited {os.WEXITSTATUS(status)}"
    else:
        return
    last = started[-1] if started else None
    for tid in ids:
        if tid in ended:
            continue
        if tid == last:
            why = f"{death} in this test"
        elif tid in started:
            continue
        else:
            why = f"not run: {death} in {last}"
        print(f"PYV {driver} error 0.00 {tid} {why}", flush=True)
        counts["error"] = counts.get("error", 0) + 1
        counts["run"] = counts.get("run", 0) + 1


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
            run_file(driver, without_excluded(suite), counts)
        print(
            f"PYVERBS {driver} {f} run={counts.get('run', 0)} ok={counts.get('ok', 0)}"
            f" skip={counts.get('skip', 0)} fail={counts.get('fail', 0)}"
            f" error={counts.get('error', 0)} secs={time.monotonic() - t0:.0f}",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
