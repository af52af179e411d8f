#!/usr/bin/python3
"""test_lines.py - the 2.x recorder's choices per PyTorch line, without a
PyTorch: the design each version replays on, the counters of a 2.0-2.2
MetaConverter (no describer: its memos, pending list and sweep period), and
what cannot be said of 2.0-2.2 stopping the recording (NOT JUDGED). The
real 2.6 and 2.14 runs are check_torch2.py's; 2.0-2.2 cannot run here."""
import os
import sys
import types
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                "scripts"))
from fakegc import torch2  # noqa: E402


def torch_stub(version):
    return types.SimpleNamespace(__version__=version, __file__="/nowhere/torch/__init__.py",
                                 float32=object())


class MC:
    """A MetaConverter as 2.0-2.2's meta_utils.py@003dca52 has it."""
    def __init__(self):
        self.tensor_memo = {1: "f1", 2: "f2"}
        self.storage_memo = {1: "s1"}
        self.maybe_storages_to_delete = ["r1", "r2", "r3"]
        self.check_expired_frequency = 128
        self.hit, self.miss = 4, 1


class Lines(unittest.TestCase):
    def design(self, v):
        return torch2.design_line(v).split('"')[1]

    def test_design_per_version(self):
        got = {v: self.design(v) for v in ("2.0.1", "2.1.2", "2.2.2+cpu", "2.3.0", "2.6.0",
                                            "2.13.0", "2.14.1", "2.15.0a0")}
        self.assertEqual(got, {"2.0.1": "pytorch-2.0", "2.1.2": "pytorch-2.0",
                               "2.2.2+cpu": "pytorch-2.0", "2.3.0": "pytorch-2.3",
                               "2.6.0": "pytorch-2.3", "2.13.0": "pytorch-2.3",
                               "2.14.1": "pytorch-2.14", "2.15.0a0": "pytorch-2.14"})

    def test_counters_without_a_describer(self):
        v = torch2.read_mc(MC(), 0)
        self.assertEqual(v, {"memo_tensor_ids": 2, "memo_storage_ids": 1, "memo_fake": 2,
                             "memo_storage": 1, "pending": 3, "sweep_every": 128, "hits": 4,
                             "misses": 1, "memo_constants": 0})

    def test_counters_with_a_describer(self):
        mc = MC()
        mc.describer = types.SimpleNamespace(lookup_tensor={7: 1}, lookup_storage={})
        v = torch2.read_mc(mc, None)
        self.assertEqual(v, {"memo_tensor_ids": 1, "memo_storage_ids": 0, "memo_fake": 2,
                             "memo_storage": 1, "hits": 4, "misses": 1})

    def recorder(self, version):
        return torch2.Recorder(torch_stub(version), "/tmp/prog.py")

    def test_2_0_writes_its_design_and_the_sweep_counters(self):
        r = self.recorder("2.1.0")
        text = r.render()
        self.assertIn('config compat = "pytorch-2.0"', text)
        self.assertIn("the recorder has never run on 2.0-2.2", text)
        self.assertIn("pending", r.counters)
        self.assertNotIn("pending", self.recorder("2.6.0").counters)

    def test_what_cannot_be_said_stops_the_recording(self):
        r = self.recorder("2.2.0")
        r.inexpressible("prog.py:7", "an op output still memoized")
        text = r.render()
        self.assertTrue(r.stopped)
        self.assertEqual(r.stop_site, "prog.py:7")
        self.assertTrue(r.stop_why.startswith("not expressible"))
        self.assertIn("STOPPED after 0 events (what cannot be said) at prog.py:7", text)
        self.assertIn("prog.py:7: an op output still memoized; recording stopped here", text)
        r.finish()
        text = r.render()
        self.assertIn('verdict(stopped="prog.py:7", why="not expressible: an op output still '
                      'memoized")', text)
        fakegc = os.environ.get("FAKEGC")
        if fakegc:     # replayed: NOT JUDGED, never a pass
            import subprocess
            import tempfile
            with tempfile.NamedTemporaryFile("w", suffix=".scn", delete=False) as f:
                f.write(text)
            try:
                p = subprocess.run([fakegc, "run", f.name], stdout=subprocess.PIPE, text=True)
            finally:
                os.unlink(f.name)
            self.assertNotEqual(p.returncode, 0, p.stdout)
            self.assertIn("NOT JUDGED", p.stdout)
            self.assertNotIn("PASS", p.stdout)


class Dim:
    """A SymInt as the recorder reads one: its node's expr and hint."""
    def __init__(self, expr, hint):
        self.node = types.SimpleNamespace(expr=expr, hint=hint)


class SymbolNames(unittest.TestCase):
    """PyTorch's symbols (s26, s77) named as the model makes its own: by
    size, in the order the dynamic conversions see them (fk_shape.c), and
    sympy's expressions in the language's words (the model's parser reads
    them back: symbolic_sizes_214.scn)."""

    def test_names_follow_the_models_duck_sizing(self):
        import sympy
        a, b, c = sympy.symbols("s26 s77 s5", integer=True)
        syms = torch2.Symbols()
        syms.convert(types.SimpleNamespace(_base=None, shape=(Dim(a, 3), 4)))
        syms.convert(types.SimpleNamespace(_base=None, shape=(Dim(b, 4), 1, Dim(c, 5))))
        self.assertEqual(syms.hints, [3, 4, 5])
        self.assertEqual(syms.names, {"s26": 0, "s77": 1, "s5": 2})
        t = syms.text
        self.assertEqual(t(2 * a), "2*s0")
        self.assertEqual(t(a + 1), "1 + s0")
        self.assertEqual(t(a * b - 3), "-3 + s0*s1")
        self.assertEqual(t(sympy.floor(a / 2)), None)         # not a FloorDiv: not said
        self.assertEqual(t(sympy.Max(a, b)), None)
        self.assertEqual(t(sympy.Symbol("s99") + 1), None)   # no conversion named it

    def test_floordiv(self):
        import sympy
        a = sympy.Symbol("s26", integer=True)
        syms = torch2.Symbols()
        syms.names["s26"] = 0
        FloorDiv = type("FloorDiv", (sympy.Function,), {})
        self.assertEqual(syms.text(FloorDiv(a + 1, 2)), "(1 + s0) // (2)")


if __name__ == "__main__":
    unittest.main()
