"""A fresh FakeTensorMode per step over the parameters of a transformer
layer (as a tracer re-run per step does): each step's mode dies in a
reference cycle, so CPython's cycle collector frees it, and its fakes, at a
moment of its own choosing, possibly in the middle of the next step's
conversions."""
import torch
from torch._subclasses.fake_tensor import FakeTensorMode

torch.manual_seed(0)
layer = torch.nn.Transformer(d_model=16, nhead=2, num_encoder_layers=2,
                             num_decoder_layers=2, dim_feedforward=32)
params = list(layer.parameters())
for step in range(6):
    mode = FakeTensorMode()
    fakes = [mode.from_tensor(p) for p in params]
    del fakes, mode
