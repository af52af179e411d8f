#!/usr/bin/python3
"""record.py - record a real PyTorch (1.13 to 2.14) program's fake-tensor lifecycle as
a fakegc scenario (cli.md "Additions, version 2 / Recording real programs").

    scripts/record.py [-o OUT.scn] [--max-events N] [--no-batch] [--compare]
                      [--fakegc PATH] [--no-hooks] [--lang 1|2] PROGRAM.py [ARGS...]

It runs PROGRAM under the Python it is started with (Debian's torch 1.13.1
by default; `fakegc record --python` picks another) and writes,
in order: every FakeTensorMode made (`m1 = fake_mode()`), every stand-alone
MetaConverter (`c1 = meta_converter()`), the real tensors the program
converts (written when first converted: sizes, strides, dtype, device,
requires_grad, their grad, views as `as_strided` off the recorded base,
storage sharing as `detach()`, sparse COO/CSR and quantized layouts), every
conversion (`f1 = m1.fake(t1)`, `r1 = c1.meta(t1)`, or
`expect raises(UnsupportedFakeTensor, ...)`), the fake tensors that
operations produce (as a constructor of the same shape under `with m1`:
op outputs are not memoized, so that is a faithful stand-in for the mode's
lifetime), and every death, in order (`del t1, f1`). After each conversion
and each death it writes `expect` lines for the memo counters PyTorch shows
that changed; at the end, `live()` expectations for modes, converters,
fakes and finalizers. `fakegc run --compat pytorch-1.13 OUT.scn` must pass on it.

How it observes PyTorch: the package beside this file, one module per
PyTorch line (fakegc/torch113.py for 1.13, fakegc/torch2.py for 2.3 to
2.14), chosen by the torch version it imports; each says which entry points
it patches and how deaths are ordered.

Exit: the program's exit status (0 when it ends normally); 2 usage;
3 the recorder itself failed (the scenario is written up to there, its
header says where); 77 torch not importable.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from fakegc import engine  # noqa: E402
from fakegc.cli import main  # noqa: E402

engine.OWN_FILES.add(os.path.abspath(__file__))

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
