"""Unit tests of scripts/record.py against real PyTorch 1.13.1 (ctest
record_unit, label `record`). FAKEGC (environment) is the fakegc binary.

Each test records a small program and checks what the recorder wrote for
each hooked entry point, that the replay passes, and that it can fail."""
import json
import os
import re
import signal
import subprocess
import tempfile
import textwrap
import time
import unittest

import outside  # tests/record/, on sys.path as run_unit.py puts it

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RECORD = os.path.join(ROOT, "scripts", "record.py")
FAKEGC = os.environ.get("FAKEGC", os.path.join(ROOT, "build", "fakegc"))
HEAD = ("import torch\n"
        "from torch._subclasses.fake_tensor import FakeTensorMode\n"
        "from torch._subclasses.meta_utils import MetaConverter\n")


class Base(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.d = self.tmp.name

    def tearDown(self):
        self.tmp.cleanup()

    def record(self, body, *opts, expect_rc=0):
        prog = os.path.join(self.d, "prog.py")
        with open(prog, "w") as f:
            f.write(HEAD + textwrap.dedent(body))
        out = os.path.join(self.d, "out.scn")
        r = subprocess.run(["/usr/bin/python3", RECORD, "-o", out] + list(opts) + [prog],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.assertEqual(r.returncode, expect_rc, r.stderr)
        self.stderr, self.stdout = r.stderr, r.stdout
        with open(out) as f:
            return out, f.read()

    def replay(self, path, *opts):
        r = subprocess.run([FAKEGC, "run", "--format", "json", "--compat", "pytorch-1.13"]
                           + list(opts) + [path], stdout=subprocess.PIPE, text=True)
        return r.returncode, json.loads(r.stdout)["scenarios"][0]

    def assertReplays(self, path):
        """0 fidelity mismatches (the verdict may still say the program leaks)."""
        rc, rep = self.replay(path)
        self.assertIn(rc, (0, 1))
        self.assertEqual(rep["failures"], [])
        v = rep["verdict"]      # none when the recording stopped early
        self.assertEqual(rc == 1, bool(v) and any(v[c] for c in ("lost", "accumulating")),
                         v and v["text"])
        return rep

    def assertNotJudged(self, path, site):
        """A recording that stopped before the program ended: NOT JUDGED at
        the program's site, exit 3, never a pass; 0 fidelity mismatches in
        what was recorded."""
        rc, rep = self.replay(path)
        self.assertEqual(rc, 3, rep)
        self.assertEqual(rep["status"], "error")
        self.assertEqual(rep["failures"], [])
        self.assertEqual(rep["not_judged"]["site"], site, rep)
        self.assertTrue(rep["error"].startswith("NOT JUDGED: the recorder stopped at " + site),
                        rep["error"])
        return rep


class Rec(Base):
    """ctest record_unit."""

    def test_each_hook_and_death_order(self):
        path, text = self.record("""
            m = FakeTensorMode()                 # FakeTensorMode.__init__
            t = torch.randn(4, 4)
            f = m.from_tensor(t)                 # FakeTensorConverter.__call__
            v = t[1:3]
            fv = m.fake_tensor_converter(m, v)   # a converter call
            with m:
                y = torch.empty(2, 3)            # FakeTensorMode.__torch_dispatch__
            z = f.t()                            # an op on a fake, outside `with`
            mc = MetaConverter()                 # MetaConverter.__init__
            r = mc(t)                            # MetaConverter.__call__
            del fv
            del v
            del f
            del t, r
        """)
        for want in ("m1 = fake_mode()", "t1 = empty(4, 4)", "f1 = m1.fake(t1)",
                     "t2 = t1.as_strided((2, 4), (4, 1), 4)", "f2 = m1.fake(t2)",
                     "with m1", "x1 = empty(2, 3)", "x2 = f1.as_strided((4, 4), (1, 4), 0)",
                     "c1 = meta_converter()", "r1 = c1.meta(t1)"):
            self.assertIn(want, text)
        dels = re.findall(r"^del (.*?)\s*$", text.split("# the program's end")[0], re.M)
        self.assertEqual(dels, ["f2", "t2", "t1", "r1"])  # z = f.t() holds f
        self.assertRegex(text, r"f1 = m1.fake\(t1\)\s+# prog.py:7")
        self.assertIn('expect live("finalizer") == 0', text)
        self.assertReplays(path)

    def test_replay_can_fail(self):
        path, text = self.record("""
            m = FakeTensorMode()
            keep = []
            for i in range(40):
                t = torch.randn(3, 3)
                f = m.from_tensor(t)
                keep.append(f)
                del t
        """)
        self.assertReplays(path)
        rc, rep = self.replay(path, "--inject", "strong-memo")
        self.assertEqual(rc, 1)
        self.assertTrue(any("memo_meta" in fl["text"] for fl in rep["failures"]))
        # one expected number off by one must be caught at its line
        lines = text.splitlines(True)
        i = next(k for k, ln in enumerate(lines) if ln.startswith("expect m1.pending =="))
        n = int(lines[i].split("==")[1])
        lines[i] = "expect m1.pending == %d\n" % (n + 1)
        with open(path, "w") as f:
            f.writelines(lines)
        rc, rep = self.replay(path)
        self.assertEqual(rc, 1)
        self.assertEqual([fl["line"] for fl in rep["failures"]], [i + 1])
        # ... and say the program's line it follows, the recording's being the line
        at = [ln for ln in lines[:i] if ln.startswith("at(")][-1].split(", ")
        fl = rep["failures"][0]
        self.assertEqual((fl["kind"], fl["program_file"], fl["program_line"]),
                         ("fidelity", at[0][4:-1], int(at[1].rstrip(")\n"))))

    def test_batching_and_max_events(self):
        body = """
            p = torch.nn.Parameter(torch.randn(5))
            for step in range(300):
                m = FakeTensorMode()
                f = m.from_tensor(p)
                del m, f
        """
        path, text = self.record(body)
        self.assertRegex(text, r"repeat 29[89] ")
        self.assertLess(text.count("\n"), 60)
        self.assertReplays(path)
        self.assertIn('expect live("finalizer") == 600', text)
        path, text = self.record(body, "--max-events", "25")
        self.assertIn("stopped recording after 25 events (--max-events 25 reached) at prog.py:8", self.stderr)
        self.assertIn("# STOPPED after 25 events (--max-events) at prog.py:8", text)
        rep = self.assertNotJudged(path, "prog.py:8")
        self.assertEqual(rep["not_judged"]["why"], "--max-events 25 reached")

    FAULT_BODY = """
        m = FakeTensorMode()
        t = torch.randn(4, 4)
        f = m.from_tensor(t)
        with m:
            y = torch.empty(2)
        mc = MetaConverter()
        r = mc(t[1:])
        del f, y, r
    """

    def fault(self, n):
        """A failure inside the recorder (injected at event n: 1 mode,
        2 conversion, 3 op output, 4 MetaConverter(), 5 mc(t)) stops
        recording, exits 3, and the partial scenario still replays."""
        os.environ["FAKEGC_RECORD_FAULT"] = str(n)
        try:
            path, text = self.record(self.FAULT_BODY, expect_rc=3)
        finally:
            del os.environ["FAKEGC_RECORD_FAULT"]
        self.assertIn("INTERNAL: the recorder failed (RuntimeError: fault injected at "
                      "event %d" % n, text)
        self.assertIn("STOPPED after %d events (a recorder error)" % n, text)
        self.assertIn("internal error: the recorder failed", self.stderr)
        rep = self.assertNotJudged(path, re.search(r"STOPPED after \d+ events \(a recorder "
                                                   r"error\) at (\S+):", text).group(1))
        self.assertIn("the recorder itself failed: RuntimeError: fault injected", rep["error"])

    def test_recorder_failure_at_conversion(self):
        self.fault(2)

    def test_recorder_failure_at_op_output(self):
        self.fault(3)

    def test_recorder_failure_at_meta_conversion(self):
        self.fault(5)

    def test_program_in_pytorch_test_style(self):
        """tests/record/programs: written in the style of PyTorch's own
        test_fake_tensor.py / test_meta.py, not for the recorder."""
        prog = os.path.join(os.path.dirname(os.path.abspath(__file__)), "programs",
                            "pytorch_test_style.py")
        out = os.path.join(self.d, "ts.scn")
        r = subprocess.run(["/usr/bin/python3", RECORD, "-o", out, prog],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        text = open(out).read()
        self.assertIn("memo hit: PyTorch 1.13.1's _fix_weakref keeps it alive", text)
        self.assertIn("non-leaf in PyTorch", text)
        self.assertReplays(out)

    def test_cycle_death_inside_a_conversion(self):
        """tests/record/programs/cycle_death_in_conversion.py: the cycle
        collector frees three earlier modes and their fakes inside the 9th
        conversion of the 4th mode. Their deaths are written after that
        conversion (never between its lines and its counters), and the
        replay has 0 fidelity mismatches (was: `expect m4.memo_fake == 9
        actual: 8`)."""
        prog = os.path.join(os.path.dirname(os.path.abspath(__file__)), "programs",
                            "cycle_death_in_conversion.py")
        out = os.path.join(self.d, "cd.scn")
        r = subprocess.run(["/usr/bin/python3", RECORD, "--no-batch", "-o", out, prog],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertReplays(out)
        lines = [ln.split("#")[0].strip() for ln in open(out)]
        conv = [i for i, ln in enumerate(lines) if ln.endswith(" = m4.fake(t9)")][0]
        end = conv + 1
        while lines[end].startswith("del "):
            end += 1
        dead = lines[conv + 1:end]       # 3 modes and their 34 fakes each
        self.assertEqual(sorted(d for d in dead if d.startswith("del m")),
                         ["del m1", "del m2", "del m3"], lines[conv - 6:conv + 3])
        self.assertEqual(len(dead), 3 + 3 * 34)
        self.assertTrue(lines[end].startswith("expect m"), lines[end])

    def test_make_fx_survivors_as_pytorch(self):
        """tests/record/programs/make_fx_loop.py: make_fx(f, tracing_mode=
        "fake") in a loop over shapes, graphs dropped. What real PyTorch
        1.13.1 keeps after gc.collect() (truth.py: weakrefs, objgraph) is
        what the verdict says, class by class: no fake and no mode (nothing
        lost, nothing held), and the finalizers on the program's inputs,
        growing by 4 per trace (accumulating); 0 fidelity mismatches."""
        here = os.path.dirname(os.path.abspath(__file__))
        prog = os.path.join(here, "programs", "make_fx_loop.py")
        out = os.path.join(self.d, "mfx.scn")
        r = subprocess.run(["/usr/bin/python3", RECORD, "-o", out, prog],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        rep = self.assertReplays(out)
        t = subprocess.run(["/usr/bin/python3", os.path.join(here, "truth.py"), prog],
                           stdout=subprocess.PIPE, text=True, cwd=self.d)
        if t.returncode == 77:
            self.skipTest(t.stdout.strip())
        truth = json.loads(t.stdout.strip().splitlines()[-1])
        import check_record
        got = check_record.classes(rep["verdict"]["text"])
        for noun, kind in (("fake tensor", "fake"), ("mode", "mode")):
            model = sum(v for (c, n), v in got.items() if n == noun)
            self.assertEqual(model, truth[kind]["alive"], (noun, rep["verdict"]["text"]))
        self.assertEqual(check_record.finalizer_check(got, truth["finalizer"],
                                                      rep["verdict"]["text"]), [])
        self.assertEqual(got.get(("accumulating", "finalizer")), truth["finalizer"]["alive"])

    def test_lang_2_forms(self):
        """--lang 2 writes set_(), fake_converter() and c.fake(m, t). The
        replay needs an interpreter with the language's version 2;
        FAKEGC_V2 may name one, else FAKEGC is tried; skipped where neither
        parses version 2."""
        prog = os.path.join(os.path.dirname(os.path.abspath(__file__)), "programs",
                            "set_and_converters.py")
        out = os.path.join(self.d, "set2.scn")
        r = subprocess.run(["/usr/bin/python3", RECORD, "--lang", "2", "-o", out, prog],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        text = open(out).read()
        for want in ("t2 = empty(0).set_(t1.storage(), 4, (2, 3), (3, 1))",
                     "t3.set_(empty(10).storage(), 0, (10,), (1,))",
                     "fc1 = fake_converter()", "f5 = fc1.fake(m1, t5)"):
            self.assertIn(want, text)
        self.assertNotIn("version 1 of the language cannot say", text)
        fakegc = os.environ.get("FAKEGC_V2", FAKEGC)
        probe = os.path.join(self.d, "v2.scn")
        with open(probe, "w") as f:
            f.write("c = fake_converter()\n")
        if subprocess.run([fakegc, "run", "-q", probe]).returncode == 2:
            self.skipTest("%s has no version 2 of the language yet" % fakegc)
        # 0 fidelity mismatches; the program leaks one fake (fd, a memo hit through
        # the stand-alone converter: 1.13.1's _fix_weakref), as real PyTorch does
        r = subprocess.run([fakegc, "run", "--compat", "pytorch-1.13", out],
                           stdout=subprocess.PIPE, text=True)
        self.assertEqual(r.returncode, 1)
        self.assertIn("lost: 1 fake tensor made at set_and_converters.py:23", r.stdout)
        self.assertNotIn("fidelity", r.stdout)

    def test_what_cannot_be_said_is_listed(self):
        path, text = self.record("""
            m = FakeTensorMode()
            a = torch.zeros(4, dtype=torch.int16)
            fa = m.from_tensor(a)
            b = torch.randn(4, 4)
            fb = m.from_tensor(b)
            b.set_(torch.randn(2))
            fb2 = m.from_tensor(torch.randn(1))
            raise ValueError("late")
        """, expect_rc=1)
        self.assertIn("dtype torch.int16 has no scenario name", text)
        self.assertIn("set_() or .data = moved it", text)
        self.assertIn("the program raised ValueError: late", text)


class Cmd(Base):
    """ctest record_cmd: `fakegc record` and how programs end."""

    def write(self, body):
        prog = os.path.join(self.d, "prog.py")
        with open(prog, "w") as f:
            f.write(HEAD + textwrap.dedent(body))
        return prog

    def fakegc(self, *args):
        r = subprocess.run([FAKEGC] + list(args), stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True, cwd=self.d)
        return r.returncode, r.stdout, r.stderr

    KEEP = """
        KEEP = []
        m = FakeTensorMode()
        for step in range(30):
            KEEP.append(m.from_tensor(torch.randn(3)))
            print("step", step)
    """

    def test_designs_what_if(self):
        """tests/record/programs/fix_weakref_steps.py converts the same
        parameters twice per step: 1.13.1's _fix_weakref leak (20 fakes and
        their 10 modes lost) shows under pytorch-1.13 and not under 2.0.
        The kept recording replayed under 2.0 is a what-if: its expectations
        skipped and counted in every format, the verdict alone deciding."""
        prog = os.path.join(os.path.dirname(os.path.abspath(__file__)), "programs",
                            "fix_weakref_steps.py")
        out = os.path.join(self.d, "fw.scn")
        rc, so, se = self.fakegc("record", "--designs", "all", "-o", out, "--", prog)
        self.assertEqual(rc, 1, se)
        rows = {ln.split()[0]: ln for ln in so.splitlines()[2:]}
        self.assertIn("20 lost fake tensors, 10 lost modes", rows["pytorch-1.13"], so)
        self.assertRegex(rows["pytorch-1.13"], r"^pytorch-1.13 +60 +60 +0 +0 +FAIL \(lost")
        self.assertNotIn("lost", rows["pytorch-2.0"], so)
        self.assertRegex(rows["pytorch-2.0"], r"^pytorch-2.0 +40 +0 +0 +0 ")
        rc, so2, se = self.fakegc("record", "--designs", "pytorch-2.0,pytorch-1.13", "--", prog)
        self.assertEqual([ln.split()[0] for ln in so2.splitlines()[2:]],
                         ["pytorch-2.0", "pytorch-1.13"])
        rc, so, se = self.fakegc("record", "--designs", "pytorch-0.4", "--", prog)
        self.assertEqual(rc, 2)
        self.assertIn("no design 'pytorch-0.4'", se)
        # the kept recording, replayed under each design
        rc, rep = self.replay(out)                  # pytorch-1.13: checked
        self.assertEqual((rc, rep["whatif"], rep["failures"]), (1, None, []))
        r = subprocess.run([FAKEGC, "run", "--format", "json", "--compat", "pytorch-2.0", out],
                           stdout=subprocess.PIPE, text=True)
        w = json.loads(r.stdout)["scenarios"][0]
        nexpect = sum(1 for ln in open(out) if ln.lstrip().startswith("expect "))
        self.assertEqual(w["whatif"]["skipped_fidelity"], nexpect)
        self.assertEqual(w["failures"], [])
        self.assertEqual(w["verdict"]["lost"], 0)
        for fmt, want in (("text", "skipped: %d expectations (1.13.1 fidelity" % nexpect),
                          ("tap", "# what-if under pytorch-2.0:"),
                          ("junit", "skipped: %d expectations (1.13.1 fidelity" % nexpect)):
            r = subprocess.run([FAKEGC, "run", "--format", fmt, "--compat", "pytorch-2.0", out],
                               stdout=subprocess.PIPE, text=True)
            self.assertIn(want, r.stdout, fmt)
        # without the recorder's first line it is no recording: checked, and 2.0 differs
        plain = os.path.join(self.d, "plain.scn")
        with open(out) as f, open(plain, "w") as g:
            g.writelines(f.readlines()[1:])
        r = subprocess.run([FAKEGC, "run", "--format", "json", "--compat", "pytorch-2.0", plain],
                           stdout=subprocess.PIPE, text=True)
        self.assertNotEqual(json.loads(r.stdout)["scenarios"][0]["failures"], [])

    def test_record_command(self):
        prog = self.write(self.KEEP)
        out = os.path.join(self.d, "keep.scn")
        rc, so, se = self.fakegc("record", "-o", out, "--", prog)
        self.assertEqual(rc, 1, se)
        self.assertRegex(so, r"accumulating: 30 fake tensors made at prog.py:8, still growing "
                             r"at the end: \+1.00 per round, made in rounds 1..30 of 30")
        self.assertIn("held by the program at KEEP[0] -> tensor#", so)
        self.assertNotIn("step 3", so)              # the program's output goes to stderr
        self.assertIn("step 3", se)
        named = "%s (recording %s)" % (prog, out)   # the report is on the program
        self.assertEqual(so.splitlines()[0], "FAIL " + named)
        rc2, so2, _ = self.fakegc("run", "--compat", "pytorch-1.13", out)
        self.assertEqual((rc2, so2), (rc, so.replace(named, out)))   # the same verdict later
        rc, so, se = self.fakegc("record", prog)
        self.assertEqual(so.splitlines()[0], "FAIL " + prog)        # not a temporary .scn
        self.assertNotIn("fakegc-record-", so)
        rc, so, se = self.fakegc("record", "--format", "json", prog)
        self.assertEqual(rc, 1, se)
        v = json.loads(so)["scenarios"][0]["verdict"]
        self.assertEqual((v["lost"], v["accumulating"] > 0), (0, True))
        rc, so, se = self.fakegc("record", "--fail-on", "lost", prog)
        self.assertEqual(rc, 0, so)                 # accumulating does not fail then
        rc, so, se = self.fakegc("record", prog, "--fail-on", "lost")
        self.assertEqual(rc, 1, so)                 # options end at the program: its own
        with open(out) as f:                        # the recording says what it is
            self.assertRegex(f.readline(), r'^config recording = "prog.py"   # recorded by ')
        rc, so, se = self.fakegc("record", "--fail-on", "bogus", prog)
        self.assertEqual(rc, 2, se)
        rc, so, se = self.fakegc("record", "--no-such-option", prog)
        self.assertEqual(rc, 2, se)
        rc, so, se = self.fakegc("record", "--python", "/nonexistent/python", prog)
        self.assertEqual(rc, 2, se)

    def test_record_speaks_the_newest_language(self):
        # set_() and a stand-alone converter: with version 1 they were listed as
        # unsayable and the replay showed fidelity mismatches it did not cause
        prog = os.path.join(os.path.dirname(os.path.abspath(__file__)), "programs",
                            "set_and_converters.py")
        rc, so, se = self.fakegc("record", "--", prog)
        self.assertEqual(rc, 1, se)
        self.assertNotIn("fidelity", so)
        self.assertIn("lost: 1 fake tensor made at set_and_converters.py:23", so)
        rc, so, se = self.fakegc("record", "--lang", "1", "--", prog)
        self.assertIn("fidelity", so)             # what version 1 cannot say

    def test_suppressions(self):
        prog = self.write(self.KEEP)
        rules = os.path.join(self.d, "kept.supp")
        with open(rules, "w") as f:
            f.write("# the list is kept on purpose\n"
                    "params-kept-on-purpose: kind=fake holder=KEEP*\n"
                    "other: class=lost site=nowhere.py:*\n")
        rc, so, se = self.fakegc("record", "--suppress", rules, prog)
        self.assertEqual(rc, 0, so + se)
        self.assertIn("suppressed: 30 fake tensors by rule params-kept-on-purpose", so)
        self.assertNotIn("accumulating: 30 fake tensors", so)
        with open(rules, "w") as f:
            f.write("r: kind=fake site=prog.py:9\n")     # another line: no match
        rc, so, se = self.fakegc("record", "--suppress", rules, prog)
        self.assertEqual(rc, 1, so)
        self.assertIn("accumulating: 30 fake tensors", so)
        with open(rules, "w") as f:
            f.write("r: kind=tensors\n")
        rc, so, se = self.fakegc("record", "--suppress", rules, prog)
        self.assertEqual(rc, 2, so)                      # before the program runs
        self.assertIn("kept.supp:1: error: kind \"tensors\"", se)
        self.assertNotIn("step 0", se)
        rc, so, se = self.fakegc("record", "--suppress", rules + ".none", prog)
        self.assertEqual(rc, 2, so)

    def test_program_failure_is_judged(self):
        body = textwrap.dedent(self.KEEP) + "raise SystemExit(4)\n"
        prog = self.write(body)
        rc, so, se = self.fakegc("record", prog)
        self.assertEqual(rc, 1, se)
        self.assertIn("exited with status 4; judging what was recorded", se)
        self.assertIn("accumulating: 30 fake tensors", so)
        # the verdict is at the program's true end: the line that exited
        end = (HEAD + body).count("\n")
        self.assertIn("verdict at the program's end, prog.py:%d, exit 4 (" % end, so)

    def test_os_exit_and_sigterm_keep_the_recording(self):
        for end, how in (("os._exit(3)", "the program called os._exit(3)"),
                         ("os.kill(os.getpid(), signal.SIGTERM)",
                          "the program was killed by SIGTERM")):
            prog = self.write("import os, signal\n" + textwrap.dedent(self.KEEP) +
                              "def f(local_fake):\n"
                              "    %s\n" "f(m.from_tensor(torch.randn(2)))\n" % end)
            out = os.path.join(self.d, "end.scn")
            rc, so, se = self.fakegc("record", "-o", out, prog)
            self.assertEqual(rc, 1, se)
            text = open(out).read()
            self.assertIn("# ENDED: %s" % how, text)
            self.assertIn('"local_fake (a local of f, prog.py:', text)
            self.assertIn("accumulating: 30 fake tensors", so)
            # where it ended, how: the line of f that exited, not its last event's
            line = (HEAD + textwrap.dedent(self.KEEP)).count("\n") + 3
            word = "os._exit(3)" if "_exit" in end else "SIGTERM"
            self.assertIn("verdict at the program's end, prog.py:%d, %s (" % (line, word), so)

    def test_threads_are_recorded_in_order(self):
        """tests/record/programs/threads_modes.py: two threads with a mode
        each, two sharing one; the events in the order they happened, each
        thread's marked, 0 fidelity mismatches (three recordings: the order
        differs from run to run), and the fakes and modes real PyTorch
        1.13.1 keeps (truth.py) held where the verdict says."""
        here = os.path.dirname(os.path.abspath(__file__))
        prog = os.path.join(here, "programs", "threads_modes.py")
        t = subprocess.run(["/usr/bin/python3", os.path.join(here, "truth.py"), prog],
                           stdout=subprocess.PIPE, text=True, cwd=self.d)
        truth = json.loads(t.stdout.strip().splitlines()[-1])
        import check_record
        for k in range(3):
            out = os.path.join(self.d, "thr%d.scn" % k)
            rc, so, se = self.fakegc("record", "--format", "json", "-o", out, prog)
            self.assertIn(rc, (0, 1), se)
            rep = json.loads(so)["scenarios"][0]
            self.assertEqual([f["text"] for f in rep["failures"]], [], k)
            text = open(out).read()
            self.assertGreaterEqual(len(re.findall(r"^# thread: Thread-\d+ \((own_mode|"
                                                   r"shared)\)$", text, re.M)), 4, k)
            self.assertNotIn("REFUSED", text)
            got = check_record.classes(rep["verdict"]["text"])
            for noun, kind in (("fake tensor", "fake"), ("mode", "mode")):
                held = got.get(("accumulating", noun), 0) + got.get(("still reachable", noun), 0)
                self.assertEqual(held, truth[kind]["held"], (noun, rep["verdict"]["text"]))
                self.assertEqual(got.get(("lost", noun), 0),
                                 truth[kind]["alive"] - truth[kind]["held"], noun)

    def test_holders_through_tracebacks_and_generators(self):
        """tests/record/programs/errors_keep_frames.py: exceptions kept in a
        list keep their tracebacks' frames and the frames their fakes; so do
        suspended generators. The verdict holds the 33 fakes real PyTorch
        1.13.1 keeps (truth.py), at the program's own expressions, with 0
        fidelity mismatches (the model let them die before)."""
        here = os.path.dirname(os.path.abspath(__file__))
        prog = os.path.join(here, "programs", "errors_keep_frames.py")
        out = os.path.join(self.d, "ek.scn")
        rc, so, se = self.fakegc("record", "--format", "json", "-o", out, prog)
        self.assertEqual(rc, 1, se)
        rep = json.loads(so)["scenarios"][0]
        self.assertEqual([f["text"] for f in rep["failures"]], [])
        t = subprocess.run(["/usr/bin/python3", os.path.join(here, "truth.py"), prog],
                           stdout=subprocess.PIPE, text=True, cwd=self.d)
        truth = json.loads(t.stdout.strip().splitlines()[-1])
        import check_record
        got = check_record.classes(rep["verdict"]["text"])
        held = got.get(("accumulating", "fake tensor"), 0) + \
            got.get(("still reachable", "fake tensor"), 0)
        self.assertEqual((held, got.get(("lost", "fake tensor"), 0)),
                         (truth["fake"]["held"], truth["fake"]["alive"] - truth["fake"]["held"]))
        for name in "abc":
            self.assertIn("held by the program at ERRORS[0].__traceback__.tb_next.tb_frame."
                          "f_locals['%s']" % name, rep["verdict"]["text"])
        self.assertIn("held by the program at GENS[0].gi_frame.f_locals['x']",
                      rep["verdict"]["text"])

    def test_holders_in_the_programs_spelling(self):
        """tests/record/programs/module_holders.py: fakes stashed on a
        model's layers are held at net[0]._fake_inputs[0] and
        model.head._fake_inputs[0], as the program writes them, not through
        nn.Module's _modules dicts; 0 fidelity mismatches."""
        here = os.path.dirname(os.path.abspath(__file__))
        prog = os.path.join(here, "programs", "module_holders.py")
        rc, so, se = self.fakegc("record", "--format", "json", "-o",
                                 os.path.join(self.d, "mh.scn"), prog)
        self.assertEqual(rc, 1, se)
        rep = json.loads(so)["scenarios"][0]
        self.assertEqual([f["text"] for f in rep["failures"]], [])
        text = rep["verdict"]["text"]
        for path in ("net[0]._fake_inputs[0]", "model.head._fake_inputs[0]"):
            self.assertIn("accumulating: 3 fake tensors made at module_holders.py:", text)
            self.assertIn("held by the program at %s -> tensor#" % path, text)
        self.assertNotIn("_modules", text)

    def test_the_programs_words(self):
        """tests/record/programs/compiled_graphs.py: a graph's fakes are held
        at its node's name (COMPILED[0].graph node tanh), not along the
        graph's _root._next list; one line per leak (its categories, holder,
        growth and site) comes before its groups, in the text, the JSON and
        the page; the modes' converters are their part (no converter
        objects, no converter hops in the paths); the verdict and the page's
        heap say the program's line, the recording's only as a detail; the
        timeline's x-axis is in the program's events, their sites on hover."""
        here = os.path.dirname(os.path.abspath(__file__))
        prog = os.path.join(here, "programs", "compiled_graphs.py")
        page, svg = os.path.join(self.d, "cg.html"), os.path.join(self.d, "cg.svg")
        scn = os.path.join(self.d, "cg.scn")
        rc, so, se = self.fakegc("record", "--format", "json", "--html", page, "--timeline", svg,
                                 "-o", scn, prog)
        self.assertEqual(rc, 1, se)
        rep = json.loads(so)["scenarios"][0]
        self.assertEqual([f["text"] for f in rep["failures"]], [])
        v = rep["verdict"]
        text = v["text"]
        for node in ("permute", "mm", "tanh", "sum_1"):
            self.assertIn("held by the program at COMPILED[0].graph node %s -> tensor#" % node,
                          text)
        self.assertNotIn("_root", text)
        self.assertNotRegex(text, r"\d+ converters?\b")
        self.assertIn(".mode -> FakeTensorMode#", text)
        self.assertNotIn("FakeTensorConverter#", text)
        site = "compiled_graphs.py:19"
        leak = "12 fake tensors and 12 modes in COMPILED, +1 per round at " + site
        graph = "48 fake tensors in COMPILED, +4 per round at compiled_graphs.py:14"
        lines = text.splitlines()
        # at its true end: the last statement (the loop at line 18, whose last
        # event is at line 19), and how it ended
        self.assertRegex(lines[0], r"^verdict at the program's end, compiled_graphs\.py:18, "
                         r"exit 0 \(.*; the recording's line %d\): 0 lost, 72 accumulating"
                         % v["line"])
        self.assertEqual((v["program_line"], v["program_ended"]), (18, "exit 0"))
        for want, groups in ((graph, 4), (leak, 2)):
            k = lines.index("  " + want)
            self.assertEqual([ln.split(":")[0] for ln in lines[k + 1:k + 1 + groups]],
                             ["    accumulating"] * groups, text)
            self.assertFalse(lines[k + 1 + groups].startswith("    accumulating"), text)
        self.assertEqual([(l["summary"], len(l["groups"])) for l in v["leaks"][:2]],
                         [(graph, 4), (leak, 2)])
        self.assertEqual(v["program_file"], "compiled_graphs.py")
        self.assertIn("+4 per round at compiled_graphs.py:14 (and 1 more leak)", v["summary"])
        html = open(page).read()
        self.assertIn('<li class="vleak acc fails">%s</li>' % leak, html)
        self.assertRegex(html, r"the whole heap at the program&apos;s end, compiled_graphs"
                         r"\.py:18, exit 0 <small>\(the recording's line %d\)" % v["line"])
        # the timeline's x-axis: the program's 84 events (12 rounds of 2 conversions,
        # 4 op outputs and the GraphModule), each event's site and round on hover
        chart = open(svg).read()
        self.assertIn("the program's events (", chart)
        self.assertNotIn("statements executed", chart)
        self.assertEqual(len(re.findall(r"<title>event \d+: ", chart)), 84)
        self.assertIn("<title>event 1: compiled_graphs.py:19, round 1: ", chart)
        self.assertIn("<title>event 84: compiled_graphs.py:19, round 12: ", chart)
        self.assertRegex(chart, r">60</text>\n<text [^>]*>L14 r9</text>")
        self.assertIn("<title>event 3: compiled_graphs.py:14, round 1 (the recording&apos;s "
                      "line ", html)
        self.assertIn('data-p="compiled_graphs.py:19|compiled_graphs.py:19|compiled_graphs.py:14',
                      html)
        # the same through a worker's hand-off (--jobs 2), and a hand-written
        # scenario keeps its statements
        hand = os.path.join(self.d, "hand.scn")
        with open(hand, "w") as f:
            f.write("m = fake_mode()\nt = empty(4)\nf = m.fake(t)\n")
        two = os.path.join(self.d, "two.svg")
        rc, _, se = self.fakegc("run", "-q", "--compat", "pytorch-1.13", "--jobs", "2",
                                "--timeline", two, scn, hand)
        self.assertIn(rc, (0, 1), se)
        both = open(two).read()
        self.assertIn("<title>event 84: compiled_graphs.py:19, round 12: ", both)
        self.assertEqual(both.count("statements executed"), 1, "the hand-written one's axis")

    def test_child_processes_are_said_plainly(self):
        """A fork and a spawn (multiprocessing) are not recorded, and the
        recording's header and stderr say so at the program's line."""
        prog = self.write("""
            import multiprocessing as mp
            def child(n):
                m = FakeTensorMode()
                return [m.from_tensor(torch.randn(n)) for _ in range(3)]
            if __name__ == "__main__":
                m = FakeTensorMode()
                KEEP = [m.from_tensor(torch.randn(2))]
                for method in ("fork", "spawn"):
                    p = mp.get_context(method).Process(target=child, args=(4,))
                    p.start(); p.join()
        """)
        out = os.path.join(self.d, "mp.scn")
        rc, so, se = self.fakegc("record", "-o", out, prog)
        self.assertEqual(rc, 0, se)
        line = HEAD.count("\n") + 11   # p.start()
        for what in ("forked", "started (multiprocessing, spawn)"):
            said = "prog.py:%d: a child process was %s; its fake-tensor events are not " \
                   "recorded (only the started process is)" % (line, what)
            self.assertIn(said, se)
            self.assertIn("#   - " + said, open(out).read())

    def test_any_loop_counts_its_rounds(self):
        """tests/record/programs/leak_any_loop.py: one leak (a fake appended
        to a module-level list per call), driven by a generator expression,
        a list comprehension, map, a for over a list, a for over a
        DataLoader, a while, and 12 plain calls, and the same loops making
        the fake in their own body (no call to count): each is 12 accumulating
        fakes, +1 per round, exit 1, as real PyTorch keeps 12 (truth.py)."""
        here = os.path.dirname(os.path.abspath(__file__))
        prog = os.path.join(here, "programs", "leak_any_loop.py")
        for kind in ("genexpr", "listcomp", "map", "list", "dataloader", "while", "calls",
                     "list_inline", "listcomp_inline", "dataloader_inline", "while_inline"):
            out = os.path.join(self.d, kind + ".scn")
            rc, so, se = self.fakegc("record", "--format", "json", "-o", out, prog, kind)
            self.assertEqual(rc, 1, (kind, se))
            v = json.loads(so)["scenarios"][0]["verdict"]
            self.assertEqual(json.loads(so)["scenarios"][0]["failures"], [], kind)
            self.assertEqual(v["accumulating"], 12, (kind, v))
            self.assertRegex(v["text"], r"accumulating: 12 fake tensors made at "
                             r"leak_any_loop\.py:\d+, still growing at the end: \+1\.00 per "
                             r"round, made in rounds 1\.\.12 of 12 ", kind)

    # Programs written as outside users write them (tests/record/programs/
    # out_*.py): what each one's real run decides (its exit: 1 where what it
    # keeps grows with its progress) and the holders as the program spells
    # them; the counts are truth.py's, the program's own line ("real: N
    # fakes alive") agreeing. CHILD: said plainly that a child is not recorded.
    CHILD = outside.CHILD
    OUTSIDE = outside.OUTSIDE
    # executors, coroutines and caches: test_outside_executors_async, test_outside_caches
    MORE = ("out_threads_submit_history", "out_threads_two_pools", "out_async_responses",
            "out_async_gather_log", "out_loader_collate_cache", "out_lru_cache_method")

    def check_outside(self, names):
        here = os.path.dirname(os.path.abspath(__file__))
        import check_record
        for name in names:
            rc_real, holders, child = self.OUTSIDE[name]
            prog = os.path.join(here, "programs", name + ".py")
            t = subprocess.run(["/usr/bin/python3", os.path.join(here, "truth.py"), prog],
                               stdout=subprocess.PIPE, text=True, cwd=self.d)
            truth = json.loads(t.stdout.strip().splitlines()[-1])["fake"]
            rc, so, se = self.fakegc("record", "--format", "json", "-o",
                                     os.path.join(self.d, name + ".scn"), prog)
            said = re.search(r"^real: (\d+) fakes alive", se, re.M)
            self.assertEqual(int(said.group(1)), truth["alive"], name)
            if rc_real is not None:
                self.assertEqual(rc, rc_real, (name, so[-800:], se[-400:]))
            rep = json.loads(so)["scenarios"][0]
            self.assertEqual([f["text"] for f in rep["failures"]], [], name)
            text = rep["verdict"]["text"]
            got = check_record.classes(text)
            held = got.get(("accumulating", "fake tensor"), 0) + \
                got.get(("still reachable", "fake tensor"), 0)
            self.assertEqual((held, got.get(("lost", "fake tensor"), 0)),
                             (truth["held"], truth["alive"] - truth["held"]), (name, text))
            for h in holders:
                self.assertIn("held by the program at " + h, text, name)
            if child:
                self.assertIn("%s.py:" % name, se)
                self.assertIn(child, se, name)

    def test_outside_leaks(self):
        """tests/record/programs/out_*.py, the leaking ones: loops that are
        not `for in range`, holders through closures' cells and tracebacks,
        a thread pool's results: the count real
        PyTorch 1.13.1 keeps (truth.py), held where the program spells it,
        exit 1, 0 fidelity mismatches."""
        self.check_outside([n for n, e in self.OUTSIDE.items()
                            if e[0] == 1 and "holders" not in n and n not in self.MORE])

    def test_outside_holders(self):
        """tests/record/programs/out_holders_*.py: fakes on an nn.ModuleDict's
        heads (model.heads['cls'], by its key as the program indexes it,
        not .cls), an nn.ModuleList's block and a dataclass's fields."""
        self.check_outside([n for n in self.OUTSIDE if "holders" in n])

    def test_outside_clean_threads_processes(self):
        """tests/record/programs/out_*.py, the rest: clean programs that look
        leaky (a bounded cache, a WeakValueDictionary, a del each round)
        PASS; a mode per thread; fork children said plainly, the parent
        judged on its own fakes."""
        self.check_outside([n for n, e in self.OUTSIDE.items()
                            if e[0] != 1 and n not in self.MORE])

    def test_outside_executors_async(self):
        """tests/record/programs/out_*.py: a ThreadPoolExecutor.submit loop
        keeping every output (one series over the pool's threads), a pool
        logging what it converts and another after it running the same
        function keeping nothing (a series per pool: the first's log grows
        with its tasks, not accumulating as rounds 1..8 of 16), an
        asyncio server appending each response, 12 handlers under
        asyncio.gather logging theirs: accumulating, exit 1, the counts
        the real run keeps (truth.py), held where the program spells it."""
        self.check_outside([n for n in self.MORE if "cache" not in n])

    def test_outside_caches(self):
        """tests/record/programs/out_*_cache*.py: an lru_cache on a method
        (keyed by self and shape: every instance kept) accumulating, exit
        1; a DataLoader's collate_fn caching a fake per batch shape over 3
        epochs, bounded: still reachable, exit 0. Holders as the program
        spells them (an lru_cache's entry by its key, an object in a key by
        its class, not its address)."""
        self.check_outside([n for n in self.MORE if "cache" in n])

    def test_rounds_per_thread_and_entry(self):
        """A loop's rounds are counted per thread and per entry of the loop.
        out_threads_mode_each: three threads each run their own 5 rounds
        (never one series of 15 or more, whatever the schedule) and publish
        their last fake: 3 still reachable, none accumulating, exit 0, as
        the real run keeps one per thread. out_frames_retry_errors: a
        `while True` entered twice and left by `return` after 4 rounds
        each: rounds 1..4 of 4 in each entry (the test that ends a loop is
        not a round; a return is no test). out_threads_pool: a pool's 12
        tasks on 3 threads are one series, rounds 1..12 of 12 however the
        pool spreads them, and the 6 kept results accumulating; so are
        out_threads_submit_history's 10 tasks on 4 threads (1..10 of 10,
        the 10 kept outputs accumulating, the weight's fake W not).
        out_threads_two_pools: two pools, one after the other, each running
        one function 8 times are two series of 1..8 of 8 (not one of 16),
        the first pool's 8 logged fakes accumulating; and the recorder keeps
        neither pool nor any of their threads alive.
        out_async_gather_log: 12 coroutines started before the first
        converts, each resumed twice: a coroutine's resume is no call, and
        what it makes is in the round of its own call, 1..12 of 12 (not
        the calls and resumes counted when it converts)."""
        here = os.path.dirname(os.path.abspath(__file__))
        import check_record
        runs = (("out_threads_mode_each", 0, 20, 3, 5),
                ("out_frames_retry_errors", 1, 17, 2, 4),
                ("out_threads_pool", 1, 17, 1, 12),
                ("out_threads_submit_history", 1, 27, 1, 10),
                ("out_threads_two_pools", 1, 23, 2, 8),
                ("out_async_gather_log", 1, 20, 1, 12))
        pools = {"out_threads_pool": (6, 0), "out_threads_submit_history": (10, 1),
                 "out_threads_two_pools": (8, 0), "out_async_gather_log": (12, 0)}
        for name, rc_real, line, series, rounds in runs:
            out = os.path.join(self.d, name + ".scn")
            rc, so, se = self.fakegc("record", "--format", "json", "-o", out,
                                     os.path.join(here, "programs", name + ".py"))
            self.assertEqual(rc, rc_real, (name, so[-800:], se[-400:]))
            ats = re.findall(r'^at\("[^"]*%s\.py", %d, (\d+), (\d+)\)$' % (name, line),
                             open(out).read(), re.M)
            want = sorted((str(k), str(rounds)) for k in range(1, rounds + 1)
                          for _ in range(series))
            self.assertEqual(sorted(ats), want, name)
            if name == "out_threads_two_pools":
                self.assertIn("pools and their threads alive: 0", se)
            text = json.loads(so)["scenarios"][0]["verdict"]["text"]
            got = check_record.classes(text)
            if name == "out_threads_mode_each":
                self.assertEqual((got.get(("accumulating", "fake tensor"), 0),
                                  got.get(("still reachable", "fake tensor"), 0),
                                  got.get(("accumulating", "mode"), 0)), (0, 3, 0), text)
            elif name in pools:
                self.assertEqual((got.get(("accumulating", "fake tensor"), 0),
                                  got.get(("still reachable", "fake tensor"), 0)), pools[name],
                                 text)
            else:
                self.assertRegex(text, r"accumulating: 6 fake tensors made at "
                                 r"\S*out_frames_retry_errors\.py:17, still growing at the "
                                 r"end: \+2\.00 per round, made in rounds "
                                 r"1\.\.3 of 4 of the loop around it")

    def test_fork_records_the_started_process(self):
        prog = self.write("""
            import os
            m = FakeTensorMode()
            KEEP = [m.from_tensor(torch.randn(2))]
            pid = os.fork()
            if pid == 0:
                KEEP += [m.from_tensor(torch.randn(2)) for _ in range(5)]
                os._exit(0)
            os.waitpid(pid, 0)
            KEEP.append(m.from_tensor(torch.randn(3)))
        """)
        out = os.path.join(self.d, "fork.scn")
        rc, so, se = self.fakegc("record", "-o", out, prog)
        self.assertEqual(rc, 0, se)
        text = open(out).read()
        self.assertEqual(len(re.findall(r"^hold\(f\d+, ", text, re.M)), 2, text[-600:])
        self.assertEqual(os.listdir(self.d).count("fork.scn"), 1)
        self.assertEqual([n for n in os.listdir(self.d) if n.endswith(".tmp")], [])


class Lib(Base):
    """The recorder as a library: `with fakegc.recording(PATH)` around a
    region of a program, fakegc.mark(LABEL)."""

    PROG = """
        import sys
        sys.path.insert(0, %r)
        import fakegc
        from torch._subclasses.fake_tensor import FakeTensorMode as FTM
        before = FakeTensorMode()                       # outside the region
        old = [before.from_tensor(torch.randn(2)) for _ in range(3)]
        init = FTM.__init__
        CACHE = {}
        with fakegc.recording(%r):
            m = FakeTensorMode()
            for i in range(%d):
                fakegc.mark("step %%d" %% i)
                t = torch.randn(4, 4)
                CACHE[i] = m.from_tensor(t)             # kept: accumulates
                del t
        assert FTM.__init__ is init, "hooks left installed"
        with fakegc.recording(%r):
            pass
        fakegc.mark("outside")                          # a no-op
        print("done")
    """

    def run_lib(self, rounds):
        prog = os.path.join(self.d, "lib.py")
        out = os.path.join(self.d, "region.scn")
        empty = os.path.join(self.d, "empty.scn")
        with open(prog, "w") as f:
            f.write(HEAD + textwrap.dedent(self.PROG % (os.path.join(ROOT, "scripts"), out,
                                                        rounds, empty)))
        r = subprocess.run(["/usr/bin/python3", prog], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout, "done\n")
        with open(out) as f:
            return out, f.read(), empty

    def test_region_and_marks(self):
        path, text, empty = self.run_lib(6)
        # only the region: one mode (the earlier one and its 3 fakes are left out)
        self.assertIn("m1 = fake_mode()", text)
        self.assertNotIn("m2 = fake_mode()", text)
        self.assertIn('expect live("fake") == 6', text)
        self.assertIn('expect live("mode") == 1', text)
        for i in range(6):
            self.assertIn('mark("step %d")' % i, text)
        self.assertIn("hold(f6, \"CACHE[5]\")", text)
        rc, rep = self.replay(path)
        self.assertEqual(rep["failures"], [])
        self.assertEqual(rc, 1, rep["verdict"])          # 6 fakes accumulate in CACHE
        self.assertIn("accumulating", rep["verdict"]["text"])
        # the marks: the fakes of round i are made after mark 'step i'
        acc = [g for g in rep["verdict"]["groups"] if g["class"] == "accumulating"]
        self.assertEqual([(g["mark_from"], g["mark_to"]) for g in acc], [("step 0", "step 5")],
                         rep["verdict"]["groups"])
        with open(os.path.join(self.d, "lib.py")) as f:
            line = [i for i, ln in enumerate(f, 1) if "CACHE[i] =" in ln][0]
        self.assertIn("made at lib.py:%d between marks 'step 0' and 'step 5'" % line,
                      rep["verdict"]["text"])
        rc, rep = self.replay(empty)                     # an empty region passes
        self.assertEqual((rc, rep["failures"]), (0, []))

    def test_recording_refuses_nesting(self):
        sys_path = os.path.join(ROOT, "scripts")
        r = subprocess.run(["/usr/bin/python3", "-c", textwrap.dedent("""
            import sys; sys.path.insert(0, %r)
            import fakegc
            with fakegc.recording(%r):
                try:
                    with fakegc.recording(%r):
                        pass
                except fakegc.RecordingError as e:
                    print("refused:", e)
        """ % (sys_path, os.path.join(self.d, "a.scn"), os.path.join(self.d, "b.scn")))],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("refused: fakegc.recording: a recording is already in progress", r.stdout)
        self.assertTrue(os.path.exists(os.path.join(self.d, "a.scn")))
        self.assertFalse(os.path.exists(os.path.join(self.d, "b.scn")))


class Ends(Base):
    """`fakegc record` and how a program, the recorder and fakegc end: a
    program's own status is never the recorder's; SIGINT, SIGTERM and
    --timeout end the program, what was recorded is judged, and no process
    and no temporary file is left."""

    write = Cmd.write
    KEEP = Cmd.KEEP
    LOOP = KEEP + """
        import os, subprocess, sys, time
        sleeper = subprocess.Popen(["sleep", "300"])   # in the program's group
        with open(os.path.join(os.path.dirname(sys.argv[0]), "started"), "w") as f:
            f.write("%d %d" % (os.getpid(), sleeper.pid))
        while True:
            time.sleep(0.05)
    """

    def start(self, *args):
        self.tmp_dir = os.path.join(self.d, "tmp")
        os.mkdir(self.tmp_dir)
        env = dict(os.environ, TMPDIR=self.tmp_dir)
        return subprocess.Popen([FAKEGC] + list(args), stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, cwd=self.d, env=env,
                                start_new_session=True)

    def wait_started(self, p):
        marker = os.path.join(self.d, "started")
        for _ in range(1200):
            if os.path.exists(marker) and open(marker).read():
                return [int(x) for x in open(marker).read().split()]
            self.assertIsNone(p.poll(), p.stderr.read() if p.poll() is not None else "")
            time.sleep(0.05)
        self.fail("the program did not start")

    def assert_nothing_left(self, pids):
        time.sleep(0.2)
        for pid in pids:
            alive = os.path.exists("/proc/%d" % pid)
            if alive:   # a zombie of nobody's is gone for practical purposes
                with open("/proc/%d/stat" % pid) as f:
                    alive = f.read().rsplit(")", 1)[1].split()[0] != "Z"
            self.assertFalse(alive, "process %d is left" % pid)
        self.assertEqual(os.listdir(self.tmp_dir), [])
        self.assertEqual([n for n in os.listdir(self.d) if n.endswith(".tmp")], [])

    def test_programs_own_status_is_never_the_recorders(self):
        for code in (77, 127, 2, 3):
            prog = self.write(textwrap.dedent(self.KEEP) + "import sys\nsys.exit(%d)\n" % code)
            rc, so, se = Cmd.fakegc(self, "record", prog)
            self.assertEqual(rc, 1, se)
            self.assertIn("prog.py exited with status %d; judging what was recorded" % code, se)
            self.assertNotIn("torch is not importable", se)
            self.assertNotIn("could not run the recorder", se)
            self.assertIn("accumulating: 30 fake tensors", so)

    def test_sigint_ends_the_recording_and_it_is_judged(self):
        prog = self.write(self.LOOP)
        p = self.start("record", prog)
        pids = self.wait_started(p)
        os.killpg(p.pid, signal.SIGINT)        # Ctrl-C: the terminal's whole group
        so, se = p.communicate(timeout=120)
        self.assertEqual(p.returncode, 130, se)
        self.assertIn("KeyboardInterrupt", se)
        self.assertIn("prog.py crashed: signal 2 (SIGINT); judging what was recorded", se)
        self.assertIn("accumulating: 30 fake tensors", so)
        self.assert_nothing_left(pids + [p.pid])

    def test_sigterm_is_passed_to_the_programs_group(self):
        prog = self.write(self.LOOP)
        out = os.path.join(self.d, "term.scn")
        p = self.start("record", "-o", out, prog)
        pids = self.wait_started(p)
        p.send_signal(signal.SIGTERM)          # a CI runner's timeout: fakegc alone
        so, se = p.communicate(timeout=120)
        self.assertEqual(p.returncode, 143, se)
        self.assertIn("got SIGTERM: sent it to", se)
        self.assertIn("# ENDED: the program was killed by SIGTERM", open(out).read())
        self.assertIn("accumulating: 30 fake tensors", so)
        self.assert_nothing_left(pids)

    def test_timeout_ends_the_program_and_judges_it(self):
        prog = self.write(self.LOOP)
        p = self.start("record", "--timeout", "15", prog)   # torch's import: a few s
        so, se = p.communicate(timeout=120)
        marker = os.path.join(self.d, "started")
        self.assertTrue(os.path.exists(marker), se)
        pids = [int(x) for x in open(marker).read().split()]
        self.assertEqual(p.returncode, 1, se)
        self.assertIn("prog.py ran past --timeout 15 s: sent it SIGTERM", se)
        self.assertIn("prog.py crashed: signal 15 (SIGTERM); judging what was recorded", se)
        self.assertIn("accumulating: 30 fake tensors", so)
        self.assert_nothing_left(pids)


class Scale(Base):
    """The slower ones (ctest record_scale)."""

    def test_100k_statements(self):
        path, text = self.record("""
            m = FakeTensorMode()
            for i in range(10000):     # about 11 statements each
                t = torch.empty(2, 2)
                f = m.from_tensor(t)
                del t, f
        """, "--no-batch")
        rep = self.assertReplays(path)
        self.assertGreater(rep["stats"]["statements"], 100000)

    def test_compare_table(self):
        path, text = self.record("""
            m = FakeTensorMode()
            for i in range(100):
                t = torch.empty(4)
                f = m.from_tensor(t)
                del t, f
        """, "--compare", "--fakegc", FAKEGC)
        rows = {ln.split()[0]: ln.split()[-4:] for ln in self.stdout.splitlines()
                if ln.startswith(("periodic", "eager"))}
        self.assertEqual(rows["eager"], ["0", "0", "3", "0"])
        self.assertEqual(rows["periodic"], ["100", "100", "102", "100"])

    def test_scale_program_verdict(self):
        """scripts/record/scale.py (bench.py --scale) at 3000 fakes, every
        1000th kept: the verdict is the program's (3 accumulating in KEPT,
        none lost, 0 mismatches) and the rounds fold into repeat blocks."""
        out = os.path.join(self.d, "scale.scn")
        r = subprocess.run(["/usr/bin/python3", RECORD, "-o", out,
                            os.path.join(ROOT, "scripts", "record", "scale.py"), "3000", "1000"],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        rc, rep = self.replay(out)
        self.assertEqual((rc, rep["failures"]), (1, []))
        v = rep["verdict"]
        self.assertEqual((v["lost"], v["accumulating"]), (0, 3), v["text"])
        self.assertIn("held by the program at KEPT[0]", v["text"])
        with open(out) as f:
            self.assertLess(f.read().count("\n"), 400)   # not 3000 rounds of 10 lines

    SHARED = """
        import sys
        sys.path.insert(0, %r)
        import fakegc
        from torch._subclasses.fake_tensor import FakeTensorConverter as FC
        frt = FC.from_real_tensor
        traced = []

        def from_real(*a, **k):      # PyTorch's own, under the hooked FC.__call__
            traced.append(sys.gettrace())
            return frt(*a, **k)
        FC.from_real_tensor = from_real
        with fakegc.recording(%r) as r:
            m = FakeTensorMode()
            for i in range(200):
                f = m.from_tensor(torch.empty(2, 2))
            del f
        lines = r.rec.lines
        watched = list(r.rec.fins.values()) + list(r.rec.pres.values())
        print(len(traced), sum(t is not None for t in traced), len(lines),
              len(set(map(id, lines))), len(watched), sum(w() is None for w in watched))
    """

    def test_hooks_untraced_and_lines_shared(self):
        """Under a hook PyTorch runs untraced (the rounds' trace function is
        not called for its frames), and the lines of 200 identical rounds are
        mostly the same few objects (an at() line and the expectations of
        growing counters are new in each round). The recorder watches the
        live objects only: the 400 tensors that died left nothing behind."""
        prog = os.path.join(self.d, "shared.py")
        with open(prog, "w") as f:
            f.write(HEAD + textwrap.dedent(self.SHARED % (os.path.join(ROOT, "scripts"),
                                                          os.path.join(self.d, "s.scn"))))
        r = subprocess.run(["/usr/bin/python3", prog], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        calls, traced, lines, objects, watched, dead = map(int, r.stdout.split())
        self.assertEqual((calls, traced), (200, 0))
        self.assertEqual((watched, dead), (1, 0), "watches of dead objects kept (m is alive)")
        self.assertGreater(lines, 200 * 8)
        self.assertLess(objects, lines // 2, "each line its own object")

    @staticmethod
    def expand(out):
        """The statements a folded recording runs, repeat blocks expanded
        (their expectations left out)."""
        stmts, i = [], 0
        while i < len(out):
            ln = out[i].strip()
            m = re.match(r"repeat (\d+)", ln)
            if m:
                j = out.index(out[i][:len(out[i]) - len(out[i].lstrip())] + "end", i)
                body = [b.strip() for b in out[i + 1:j] if not b.strip().startswith("expect")]
                stmts += body * int(m.group(1))
                i = j + 1
                continue
            if not ln.startswith("expect"):
                stmts.append(ln)
            i += 1
        return stmts

    def test_long_runs_fold_in_blocks_and_spill(self):
        """The fold reads its statements as they come: a run longer than the
        units it may hold (cap) is several repeat blocks, each followed by
        its last round, and running them runs every statement of the
        recording in order; what the spill file gets back is what was
        written, an at() line's rounds resolved at the end."""
        import sys
        sys.path.insert(0, os.path.join(ROOT, "scripts"))
        from fakegc import scn
        stmts = ["a = 1", "b = 2"] * 500 + ["c = 3"] + ["d = 4", "e = 5", "f = 6"] * 50
        units = [(("stmt", t, "", None), [("expect", "expect x == %d" % n, "", None)])
                 for n, t in enumerate(stmts)]
        chunks = [units[k:k + 7] for k in range(0, len(units), 7)]    # read as it comes
        out = list(scn.batch_units(iter(chunks), cap=64))
        reps = [int(re.match(r"repeat (\d+)", x).group(1)) for x in out if x.startswith("repeat")]
        self.assertEqual(self.expand(out), stmts)
        self.assertGreater(len(reps), 500 // 32 - 1, out[:20])
        self.assertLessEqual(max(reps) + 1, 32, "a block of more units than cap")
        self.assertEqual(list(scn.batch_units(iter(chunks))), list(scn.batch_units([units])),
                         "folding depends on how the units arrive")
        sp = scn.Spill()
        key = object()
        ln, at = scn.Line("stmt", "x = 1", "p.py:3"), scn.Line("stmt", "")
        at.at = ("p.py", "3", key, 2)
        sp.write([ln, at])
        seen = []

        def resolve(fn, line, chain):
            seen.append(chain)
            return 'at("%s", %s, 2, 9)' % (fn, line), (fn, line, 9, 2)
        got = [r for ch in sp.read(resolve) for r in ch]
        self.assertEqual(got, [("stmt", "x = 1", "p.py:3", None),
                               ("stmt", 'at("p.py", 3, 2, 9)', "", ("p.py", "3", 9, 2))])
        self.assertIs(seen[0][0][0], key)
        sp.close()


if __name__ == "__main__":
    unittest.main()
