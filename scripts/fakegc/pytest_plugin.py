"""fakegc for pytest: each test's call is recorded (fakegc.recording around
it: only what the test itself makes counts, so what module- and
session-scoped fixtures made is not charged to it, while what the test
makes through a fixture's mode and keeps is) and, when something it made
is still alive at its end, judged by `fakegc run --compat pytorch-1.13`
(a test that left no fake tensor, mode or converter alive passes
unjudged); a test that leaves a class it fails on (lost, accumulating
by default) fails with the verdict's lines (class, count, site, holder) as
its failure message.

    python3 -m pytest -p fakegc_pytest --fakegc [--fakegc-dir DIR]
    @pytest.mark.fakegc(fail_on="lost,accumulating,reachable", suppress="file.supp")

--fakegc-dir keeps each test's recording (named after its node id); the
session ends with a summary of what each leaking test kept. The fakegc
binary: --fakegc-bin, else FAKEGC, else `fakegc` on PATH, else the build
tree's."""

import json
import os
import re
import shutil
import subprocess
import tempfile

import pytest

DEFAULT_FAIL_ON = "lost,accumulating"
KEY = "fakegc_verdict"


def pytest_addoption(parser):
    from .cli import leak_classes      # the words as the report schema lists them
    classes = leak_classes()
    g = parser.getgroup("fakegc", "fake-tensor leaks (fakegc)")
    g.addoption("--fakegc", action="store_true", default=False,
                help="record each test's fake tensors and fail the ones that leak")
    g.addoption("--fakegc-dir", default=None, metavar="DIR",
                help="keep each test's recording (.scn) in DIR")
    g.addoption("--fakegc-fail-on", default=DEFAULT_FAIL_ON, metavar="CLASSES",
                help="what fails a test: a comma list of %s (default %s; a test's "
                     "mark wins)" % (",".join(classes) if classes else
                                     "leak classes (fakegc list options record)",
                                     DEFAULT_FAIL_ON))
    g.addoption("--fakegc-bin", default=None, metavar="PATH", help="the fakegc binary")


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "fakegc(fail_on=..., suppress=...): what fails this test's fake-tensor "
        "verdict, and a suppression rules file (fakegc record --suppress)")
    if config.getoption("--fakegc"):
        config.pluginmanager.register(Judge(config), "fakegc-judge")


def binary(config):
    b = config.getoption("--fakegc-bin") or os.environ.get("FAKEGC") or shutil.which("fakegc")
    if b:
        return b
    here = os.path.dirname(os.path.realpath(__file__))     # scripts/fakegc in the tree
    return os.path.join(os.path.dirname(os.path.dirname(here)), "build", "fakegc")


def file_name(nodeid):
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", nodeid).strip("_")[:180] + ".scn"


class Judge:
    def __init__(self, config):
        self.config = config
        self.bin = binary(config)
        keep = config.getoption("--fakegc-dir")
        self.tmp = None if keep else tempfile.mkdtemp(prefix="fakegc-pytest-")
        self.dir = os.path.abspath(keep or self.tmp)
        os.makedirs(self.dir, exist_ok=True)
        self.leaks = []           # (nodeid, verdict summary lines)
        self.recorded = 0
        self.judged = 0

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_call(self, item):
        import fakegc
        mark = item.get_closest_marker("fakegc")
        kw = dict(mark.kwargs) if mark else {}
        fail_on = kw.get("fail_on", self.config.getoption("--fakegc-fail-on"))
        supp = kw.get("suppress")
        if supp and not os.path.isabs(supp):
            supp = os.path.join(os.path.dirname(str(item.fspath)), supp)
        path = os.path.join(self.dir, file_name(item.nodeid))
        mod = getattr(item, "module", None)
        rec = fakegc.recording(path, fail_on=fail_on, suppress=supp, lang=2,
                               program=str(item.fspath),
                               module_globals=vars(mod) if mod is not None else None)
        with rec:
            outcome = yield
        self.recorded += 1
        if rec.left_nothing and "lingering" not in fail_on:
            item.stash_fakegc = None     # nothing it made is alive: nothing to judge
            return
        item.stash_fakegc = self.judge(item, path, fail_on)

    def judge(self, item, path, fail_on):
        """The verdict of the test's recording: None (no class of fail_on
        holds anything), or the failure message. Fidelity mismatches say the
        model is wrong, not the test: they are said, never a failure."""
        r = subprocess.run([self.bin, "run", "--compat", "pytorch-1.13", "--format", "json",
                            "--", path], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True)
        self.judged += 1
        try:
            sc = json.loads(r.stdout)["scenarios"][0]
        except (ValueError, KeyError, IndexError):
            return "fakegc could not judge the recording %s (exit %d): %s" % (
                path, r.returncode, r.stderr.strip()[-400:])
        if sc.get("not_judged"):
            return sc.get("error") or "NOT JUDGED"
        v = sc.get("verdict") or {}
        text = v.get("text", "") if isinstance(v, dict) else ""
        classes = [c.strip() for c in fail_on.split(",") if c.strip()]
        fails = [f["text"] for f in sc.get("failures", []) if f.get("kind") == "fidelity"]
        if fails:
            item.warn(pytest.PytestWarning("fakegc: %d fidelity mismatches in %s (the model "
                                           "is wrong, not the test)" % (len(fails), path)))
        if not any(v.get(c, 0) for c in classes):
            return None
        said = "|".join("still reachable" if c == "reachable" else c for c in classes)
        lines = [ln.strip() for ln in text.splitlines()[1:]
                 if re.match(r"\s*(%s):" % said, ln)]
        head = text.splitlines()[0] if text else "fakegc: exit %d" % r.returncode
        msg = "fake tensors left by the test: " + re.sub(r"^verdict at line \d+ \(.*?\): ", "",
                                                            head)
        msg += "".join("\n  " + ln for ln in lines)
        if fails:
            msg += "\n  fidelity mismatches (the model is wrong): %s" % fails[:3]
        msg += "\n  (recording: %s)" % path
        self.leaks.append((item.nodeid, lines))
        return msg

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item, call):
        outcome = yield
        rep = outcome.get_result()
        msg = getattr(item, "stash_fakegc", None)
        if call.when == "call" and msg and rep.outcome == "passed":
            rep.outcome = "failed"
            rep.longrepr = msg

    def pytest_terminal_summary(self, terminalreporter):
        tr = terminalreporter
        tr.section("fakegc")
        tr.write_line("%d test%s recorded, %d judged by fakegc run --compat pytorch-1.13 "
                      "(the others left no fake tensor, mode or converter alive); %d left "
                      "fake tensors behind" % (self.recorded, "" if self.recorded == 1 else "s",
                                               self.judged, len(self.leaks)))
        for nodeid, lines in self.leaks:
            tr.write_line("%s:" % nodeid)
            for ln in lines[:6]:
                tr.write_line("    " + ln)
        if self.tmp is None:
            tr.write_line("recordings kept in %s" % self.dir)

    def pytest_unconfigure(self, config):
        if self.tmp:
            shutil.rmtree(self.tmp, ignore_errors=True)
