"""Tests of scripts/xref (parser, translator, comparison), run with
    python3 -m unittest discover -s tests/xref -v
The end-to-end ones need /usr/bin/python3 with torch (skipped otherwise);
they use tests/xref/stub_fakegc.py in place of build/fakegc: a "fakegc"
that answers with PyTorch's own values, optionally perturbed."""
import os
import subprocess
import sys
import tempfile
import textwrap
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
XREF_DIR = os.path.join(ROOT, "scripts", "xref")
XREF = os.path.join(XREF_DIR, "xref.py")
STUB = os.path.join(HERE, "stub_fakegc.py")
EXAMPLES = os.path.join(XREF_DIR, "examples")
sys.path.insert(0, XREF_DIR)

import xref  # noqa: E402
from scn import ScnError, parse_text  # noqa: E402
from translate import translate  # noqa: E402


def tr_of(src):
    return translate(parse_text("t.scn", textwrap.dedent(src)))


def have_torch():
    return subprocess.run(["/usr/bin/python3", "-c", "import torch"],
                          capture_output=True).returncode == 0


def run_xref(args, env=None, src=None):
    e = dict(os.environ)
    e.update(env or {})
    with tempfile.TemporaryDirectory() as d:
        if src is not None:
            path = os.path.join(d, "case.scn")
            with open(path, "w") as f:
                f.write(textwrap.dedent(src))
            args = [a if a != "@" else path for a in args]
        p = subprocess.run([sys.executable, XREF] + args, capture_output=True, text=True,
                           env=e, timeout=600)
    return p.returncode, p.stdout.replace(d, "<tmp>") if src else p.stdout


class ParserTest(unittest.TestCase):
    def test_expect_sides_keep_their_source_text(self):
        prog = parse_text("t.scn", 'm = fake_mode()\n  expect m.memo_meta == 1, "x" # c\n')
        st = prog.stmts[1]
        self.assertEqual(st.kind, "expect")
        self.assertEqual(st.text[st.lhs.start:st.lhs.end], "m.memo_meta")
        self.assertEqual(st.op, "==")
        self.assertEqual(st.rhs.value, 1)
        self.assertEqual(st.indent, "  ")

    def test_blocks_nest_and_must_close(self):
        prog = parse_text("t.scn", "repeat 2\n with m\n  x = empty(1)\n end\nend\n")
        self.assertEqual(prog.stmts[0].body[0].kind, "with")
        self.assertEqual(prog.stmts[0].body[0].body[0].name, "x")
        with self.assertRaises(ScnError) as cm:
            parse_text("t.scn", "repeat 2\nx = empty(1)\n")
        self.assertEqual(cm.exception.line, 1)
        with self.assertRaises(ScnError):
            parse_text("t.scn", "end\n")

    def test_unreadable_line_is_unknown_not_fatal(self):
        prog = parse_text("t.scn", "v = a[2:4]\n")
        self.assertEqual(prog.stmts[0].kind, "unknown")
        self.assertIn("cannot parse", prog.stmts[0].reason)

    def test_string_with_hash_is_not_a_comment(self):
        prog = parse_text("t.scn", 'checkpoint "a#b"  # real comment\n')
        self.assertEqual(prog.stmts[0].name, "a#b")


class TranslatorTest(unittest.TestCase):
    def test_safe_untranslatable_taints_only_its_variable(self):
        tr = tr_of("""\
            m = fake_mode()
            n = live()
            expect n == 1
            expect m.memo_meta == 0
            """)
        self.assertEqual(tr.expects[3].status, "untranslatable")
        self.assertIn("line 2", tr.expects[3].reason)
        self.assertEqual(tr.expects[4].status, "compared")
        self.assertIn(2, tr.untranslatable)

    def test_lifetime_changing_line_taints_every_later_expect(self):
        tr = tr_of("""\
            m = fake_mode()
            a = empty(2)
            b = empty(2)
            expect m.memo_meta == 0
            a.x = b
            expect m.memo_meta == 0
            """)
        self.assertEqual(tr.expects[4].status, "compared")
        self.assertEqual(tr.expects[6].status, "untranslatable")
        self.assertIn("depends on untranslatable line 5", tr.expects[6].reason)

    def test_taint_flows_around_a_loop(self):
        tr = tr_of("""\
            m = fake_mode()
            repeat 3
              expect m.memo_fake == 0
              v = weakref(m).get()
            end
            """)
        self.assertEqual(tr.expects[3].status, "untranslatable")
        self.assertIn("line 4", tr.expects[3].reason)

    def test_gc_runs_but_its_value_is_not_compared(self):
        tr = tr_of("""\
            k = gc()
            expect k == 0
            expect gc() >= 0
            """)
        # fakegc's gc() also sweeps every MetaConverter: _gc_and_sweep()
        self.assertIn("v_k = _gc_and_sweep()", tr.code)
        self.assertEqual(tr.expects[2].status, "untranslatable")
        self.assertEqual(tr.expects[3].status, "untranslatable")
        body = tr.code.split("\ntry:\n", 1)[1]
        self.assertEqual(body.count("_gc_and_sweep()"), 2)

    def test_gc_of_a_generation_is_gc_collect_of_it(self):
        tr = tr_of("""\
            gc(1)
            k = gc(0)
            """)
        # generations 0..N and no sweep: CPython's gc.collect(N)
        self.assertIn("gc.collect(1)", tr.code)
        self.assertIn("v_k = gc.collect(0)", tr.code)
        self.assertNotIn("_gc_and_sweep()", tr.code.split("\ntry:\n", 1)[1])

    def test_gc_stress_collects_after_a_with_block_ends(self):
        tr = tr_of("""\
            config gc = "stress"
            m = fake_mode()
            with m
              a = empty(2)
            end
            b = empty(2)
            """)
        body = tr.code.split("\ntry:\n", 1)[1]
        # the block's statement collects inside it, and the with statement,
        # ended by __exit__ (which may leave its mode garbage), at its own
        # depth before the next statement: as fakegc's gc = "stress"
        self.assertIn("    with v_m:\n        _L = 4\n        v_a = torch.empty((2,))\n"
                      "        gc.collect()\n    gc.collect()\n    _L = 6\n", body)

    def test_unknown_line_is_listed_and_taints(self):
        tr = tr_of("""\
            m = fake_mode()
            frobnicate(m)
            expect m.memo_meta == 0
            """)
        self.assertIn("unknown function frobnicate()", tr.untranslatable[2])
        self.assertEqual(tr.expects[3].status, "untranslatable")

    def test_api_mapping(self):
        tr = tr_of("""\
            m = fake_mode(sweep="periodic", sweep_every=4)
            t = empty(2, 3, dtype=f64)
            f = m.fake(t)
            g = m.fake(empty(2, device="meta"), device="cuda:0")
            m.sweep()
            expect m.pending == 0
            """)
        self.assertIn("_fake_mode(sweep_every=4)", tr.code)
        self.assertIn("torch.empty((2, 3), dtype=torch.float64)", tr.code)
        self.assertIn("_fake(v_m, v_t)", tr.code)
        self.assertIn("_fake(v_m, torch.empty((2,), device='meta'), 'cuda:0')", tr.code)
        self.assertIn("_sweep(v_m)", tr.code)
        self.assertIn('_ctr(v_m, "pending")', tr.code)

    def test_generated_code_compiles_for_every_example(self):
        for name in sorted(os.listdir(EXAMPLES)):
            with open(os.path.join(EXAMPLES, name)) as f:
                tr = translate(parse_text(name, f.read()))
            compile(tr.code, name, "exec")
            self.assertFalse(tr.untranslatable, name)


class PlanTest(unittest.TestCase):
    def plans(self, src, evals):
        tr = tr_of(src)
        return xref.make_plans(tr, evals)

    def test_constant_value_rewrites_the_lhs(self):
        p = self.plans("m = fake_mode()\nexpect m.memo_meta == 1\n",
                       {2: [{"a": ["int", 0], "b": ["int", 1], "holds": False}]})
        self.assertEqual(p[2], [["value", "m.memo_meta", ["int", 0]]])

    def test_values_varying_in_a_loop_compare_outcomes(self):
        p = self.plans("m = fake_mode()\nrepeat 2\nexpect m.hits == 0\nend\n",
                       {3: [{"a": ["int", 0], "b": ["int", 0], "holds": True},
                            {"a": ["int", 1], "b": ["int", 0], "holds": False}]})
        self.assertEqual(p[3], [["outcome", "expect m.hits == 0", False]])

    def test_both_sides_are_compared_in_two_runs(self):
        p = self.plans("m = fake_mode()\nexpect m.memo_meta == m.memo_storage\n",
                       {2: [{"a": ["int", 2], "b": ["int", 1], "holds": False}]})
        self.assertEqual(p[2], [["value", "m.memo_meta", ["int", 2]],
                                ["value", "m.memo_storage", ["int", 1]]])

    def test_a_side_with_effects_is_never_dropped(self):
        p = self.plans("m = fake_mode()\nt = empty(2)\nexpect m.fake(t).dim() == m.memo_meta\n",
                       {3: [{"a": ["int", 1], "b": ["int", 1], "holds": True}]})
        # the impure side stays (its effect is part of the scenario)
        self.assertEqual(p[3], [["value", "m.fake(t).dim()", ["int", 1]]])


class CliTest(unittest.TestCase):
    def test_usage_errors_exit_2(self):
        rc, _ = run_xref(["--pytorch-only", "/nonexistent.scn"])
        self.assertEqual(rc, 2)
        rc, _ = run_xref(["--fakegc", "/nonexistent/fakegc", os.path.join(EXAMPLES, "01_observed_sequence.scn")])
        self.assertEqual(rc, 2)
        rc, _ = run_xref([])
        self.assertEqual(rc, 2)

    def test_torch_missing_exits_77(self):
        rc, out = run_xref(["--pytorch-only", EXAMPLES], env={"XREF_PYTHON": "/bin/false"})
        self.assertEqual(rc, 77)
        self.assertIn("SKIP", out)

    def test_directories_skip_scenarios_errors(self):
        with tempfile.TemporaryDirectory() as d:
            os.makedirs(os.path.join(d, "scenarios", "errors"))
            os.makedirs(os.path.join(d, "scenarios", "memo"))
            for p in ("scenarios/errors/bad.scn", "scenarios/memo/b.scn", "scenarios/a.scn"):
                open(os.path.join(d, p), "w").close()
            got = [os.path.relpath(p, d) for p in xref.collect([os.path.join(d, "scenarios")])]
            self.assertEqual(got, ["scenarios/a.scn", "scenarios/memo/b.scn"])


@unittest.skipUnless(have_torch(), "needs /usr/bin/python3 with torch")
class TwinServerTest(unittest.TestCase):
    """The twins run in one twin_server.py (torch imported once), each in a
    child of its own: what one twin does to PyTorch's classes is not seen by
    the next; a twin that fails, exits or hangs is reported as `PYTHON prog
    out` would be, and the twins after it still run."""
    SETS = textwrap.dedent("""\
        import json, sys
        from torch._subclasses.fake_tensor import FakeTensorMode
        seen = getattr(FakeTensorMode, "xref_mark", None)
        FakeTensorMode.xref_mark = sys.argv[1]
        json.dump({"seen": seen, "main": __name__, "argv": len(sys.argv)}, open(sys.argv[1], "w"))
        """)

    def setUp(self):
        xref.PYTHON = "/usr/bin/python3"
        xref.TWINS.stop()

    def tearDown(self):
        xref.TWINS.stop()

    def test_each_twin_runs_in_a_fresh_child(self):
        for _ in range(2):
            data, err = xref.run_pytorch(self.SETS, 60)
            self.assertIsNone(err)
            self.assertEqual(data, {"seen": None, "main": "__main__", "argv": 2})
        self.assertIsNotNone(xref.TWINS.version)

    def test_failures_and_timeouts_are_said_and_the_next_twin_runs(self):
        data, err = xref.run_pytorch("print('out')\nraise ValueError('boom')\n", 60)
        self.assertIsNone(data)
        self.assertTrue(err.startswith("the PyTorch script failed (exit 1): "), err)
        self.assertTrue(err.endswith("ValueError: boom"), err)
        data, err = xref.run_pytorch("import sys\nprint('only out')\nsys.exit(3)\n", 60)
        self.assertEqual(err, "the PyTorch script failed (exit 3): only out")
        data, err = xref.run_pytorch("import time\ntime.sleep(60)\n", 1)
        self.assertEqual(err, "the PyTorch script timed out after 1s")
        data, err = xref.run_pytorch(self.SETS, 60)
        self.assertEqual((data or {}).get("seen", "?"), None, err)

    def test_torch_missing_is_said(self):
        xref.PYTHON = "/bin/false"
        self.assertEqual(xref.TWINS.start(30), "exit 1")


@unittest.skipUnless(have_torch(), "needs /usr/bin/python3 with torch")
class WithEndTest(unittest.TestCase):
    """What scenarios/regressions/with_end_collects.scn says of PyTorch
    1.13.1: a FakeTensorMode that refers to itself, its last name dropped
    inside `with m:`, survives a collection inside the block and is gone at
    the first statement after it when every statement is followed by a
    collection (a line tracer collecting at each line event)."""
    PROG = textwrap.dedent("""\
        import gc, sys, weakref, warnings
        warnings.filterwarnings("ignore")
        from torch._subclasses.fake_tensor import FakeTensorMode
        gc.disable()
        def line(frame, event, arg):
            if event == "line":
                gc.collect()
            return line
        def calls(frame, event, arg):
            return line if frame.f_code.co_name == "scenario" else None
        def scenario(before):
            m = FakeTensorMode()
            w = weakref.ref(m)
            if before:
                m.x = m
            with m:
                if not before:
                    m.x = m
                del m
                inside = w() is not None
            after = w() is not None
            return inside, after
        sys.settrace(calls)
        r = [scenario(False), scenario(True)]
        sys.settrace(None)
        print(r)
        """)

    def test_a_self_referencing_mode_dies_when_its_with_ends(self):
        p = subprocess.run(["/usr/bin/python3", "-c", self.PROG], capture_output=True,
                           text=True, timeout=300)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stdout.strip(), "[(True, False), (True, False)]")


@unittest.skipUnless(have_torch(), "needs /usr/bin/python3 with torch")
class EndToEndTest(unittest.TestCase):
    CASE = """\
        m = fake_mode(sweep="periodic")
        a = empty(4, 4)
        fa = m.fake(a)
        v = a.t()
        fv = m.fake(v)
        repeat 2
          expect m.pending == 0
          del v
          v = a.t()
        end
        expect m.memo_meta == m.memo_storage
        expect raises(UnsupportedFakeTensor, m.fake(quantized(2)))
        del a
        expect m.memo_storage == 1
        expect live() == 0
        """

    def test_pytorch_only_reports_pytorch_disagreeing(self):
        rc, out = run_xref(["--pytorch-only", "@"], src=self.CASE)
        self.assertEqual(rc, 1, out)
        self.assertIn("case.scn:7: pytorch fails the expectation: expect m.pending == 0 "
                      "(pytorch: m.pending = 1) (evaluation 2 of 2)", out)
        self.assertNotIn("case.scn:11: pytorch fails", out)
        self.assertIn("case.scn:15: untranslatable: live()", out)
        self.assertIn("compared 4, pytorch fails 1, untranslatable 1", out)

    def test_fakegc_agreeing_with_pytorch_has_no_mismatch(self):
        rc, out = run_xref(["--fakegc", STUB, "@"], src=self.CASE)
        self.assertEqual(rc, 0, out)
        self.assertIn("compared 4, mismatches 0, untranslatable 1", out)
        self.assertIn("1 passed, 0 failed", out)

    def test_mismatches_are_found_on_values_outcomes_and_raises(self):
        env = {"XREF_STUB_PATCH": "return len(mc.storage_memo)=>return len(mc.storage_memo) + 1"}
        rc, out = run_xref(["--fakegc", STUB, "@"], src=self.CASE, env=env)
        self.assertEqual(rc, 1, out)
        self.assertIn("case.scn:11: mismatch: m.memo_storage: pytorch=1 fakegc=2", out)
        self.assertIn("case.scn:14: mismatch: m.memo_storage: pytorch=1 fakegc=2", out)
        self.assertNotIn("case.scn:11: mismatch: m.memo_meta", out)
        env = {"XREF_STUB_PATCH": "return len(mc.maybe_storages_to_delete)=>return 0",
               "XREF_STUB_FIRST_ONLY": "1"}
        rc, out = run_xref(["--fakegc", STUB, "@"], src=self.CASE, env=env)
        self.assertIn("case.scn:7: mismatch: expect m.pending == 0: pytorch=fails fakegc=holds",
                      out)
        env = {"XREF_STUB_PATCH": "return m.from_tensor(t)=>return t if t.is_quantized else m.from_tensor(t)",
               "XREF_STUB_FIRST_ONLY": "1"}
        rc, out = run_xref(["--fakegc", STUB, "@"], src=self.CASE, env=env)
        self.assertIn("case.scn:12: mismatch: expect raises(UnsupportedFakeTensor, "
                      "m.fake(quantized(2))): pytorch=holds fakegc=fails", out)

    def test_examples_hold_in_pytorch(self):
        rc, out = run_xref(["--pytorch-only", EXAMPLES])
        self.assertEqual(rc, 0, out)
        self.assertIn("0 failed", out)


if __name__ == "__main__":
    unittest.main()
