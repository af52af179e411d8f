"""Unit tests of scripts/record.py against real PyTorch 1.13.1 (ctest
record_unit, label `record`). FAKEGC (environment) is the fakegc binary.

Each test records a small program and checks what the recorder wrote for
each hooked entry point, that the replay passes, and that it can fail."""
import json
import os
import re
import subprocess
import tempfile
import textwrap
import unittest

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
        # 0 mismatches; what is left at the end (under pytorch-1.13, the fakes
        # 1.13.1's _fix_weakref made immortal) is the program's verdict
        rc, rep = self.replay(path)
        self.assertIn(rc, (0, 1))
        self.assertEqual(rep["failures"], [])
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
                     "with m1", "x1 = empty(2, 3)", "x2 = empty_strided((4, 4), (1, 4))",
                     "c1 = meta_converter()", "r1 = c1.meta(t1)"):
            self.assertIn(want, text)
        dels = re.findall(r"^del (.*?)\s*$", text, re.M)
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
        self.assertIn("stopped recording after 25 events (--max-events 25) at prog.py:8", self.stderr)
        self.assertIn("# STOPPED after 25 events (--max-events) at prog.py:8", text)
        self.assertReplays(path)

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
        self.assertReplays(path)

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
        rc, rep = self.replay(out)
        self.assertIn(rc, (0, 1))
        self.assertEqual(rep["failures"], [])

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


if __name__ == "__main__":
    unittest.main()
