"""A fresh FakeTensorMode per step over a transformer layer's parameters,
each step's state in a reference cycle (it keeps a bound method of its own),
so that only CPython's cycle collector frees a step's mode and fakes, at a
moment of its own choosing: in a real run, sometimes in the middle of a
later step's conversion. Here that moment is fixed: the collector runs
inside the 9th conversion of the 4th step, right after PyTorch set its memo
entry, while the earlier steps are garbage. The recording must still
replay with 0 fidelity mismatches (those deaths written after that
conversion)."""
import gc

import torch
from torch._subclasses.fake_tensor import FakeTensorConverter, FakeTensorMode

torch.manual_seed(0)
layer = torch.nn.Transformer(d_model=16, nhead=2, num_encoder_layers=1,
                             num_decoder_layers=1, dim_feedforward=32)
params = list(layer.parameters())


class Step:
    def __init__(self):
        self.mode = FakeTensorMode()
        self.on_param = self.convert       # a bound method of itself: a cycle
        self.fakes = [self.on_param(p) for p in params]

    def convert(self, p):
        return self.mode.from_tensor(p)


set_memo = FakeTensorConverter.set_tensor_memo
collected = []


def set_memo_then_collect(self, t, v):
    set_memo(self, t, v)
    if step == 3 and len(self.tensor_memo) == 9 and not collected:
        collected.append(gc.collect())


FakeTensorConverter.set_tensor_memo = set_memo_then_collect
gc.disable()          # the cycles die only where this program says
for step in range(6):
    s = Step()
    del s
gc.enable()
assert collected and collected[0] > 0, collected
