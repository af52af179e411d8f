"""One leak (a fake appended to a module-level list per call), driven by
each kind of loop a program uses, or made by the loop's own body
(*_inline); argv[1] picks the driver. Real PyTorch
1.13.1 keeps every fake (KEEP holds them), one more per round: accumulating,
whatever the loop."""
import sys

import torch
from torch._subclasses.fake_tensor import FakeTensorMode
from torch.utils.data import DataLoader, TensorDataset

MODE = FakeTensorMode()
KEEP = []
N = 12


def step(x):
    KEEP.append(MODE.from_tensor(x))


def drive(kind):
    xs = [torch.randn(2, i + 1) for i in range(N)]
    if kind == "genexpr":
        sum(1 for x in xs if step(x) is None)
    elif kind == "listcomp":
        [step(x) for x in xs]
    elif kind == "map":
        list(map(step, xs))
    elif kind == "list":
        for x in xs:
            step(x)
    elif kind == "dataloader":
        for (x,) in DataLoader(TensorDataset(torch.randn(N, 3)), batch_size=1):
            step(x)
    elif kind == "while":
        i = 0
        while i < N:
            step(xs[i])
            i += 1
    elif kind == "list_inline":     # the loop's own body converts
        for x in xs:
            KEEP.append(MODE.from_tensor(x))
    elif kind == "listcomp_inline":
        KEEP.extend([MODE.from_tensor(x) for x in xs])
    elif kind == "dataloader_inline":
        for (x,) in DataLoader(TensorDataset(torch.randn(N, 3)), batch_size=1):
            KEEP.append(MODE.from_tensor(x))
    elif kind == "while_inline":
        while len(KEEP) < N:
            KEEP.append(MODE.from_tensor(xs[len(KEEP)]))
    elif kind == "calls":   # no loop in the program's code: called N times
        step(xs[0]); step(xs[1]); step(xs[2]); step(xs[3]); step(xs[4]); step(xs[5])
        step(xs[6]); step(xs[7]); step(xs[8]); step(xs[9]); step(xs[10]); step(xs[11])


drive(sys.argv[1])
