"""Per-step records as dataclasses with a list field and a tensor field,
kept in a module-level STATES list: STATES[i].inputs[j] and
STATES[i].output hold fakes. Real PyTorch 1.13.1 keeps 5 steps x 3 fakes."""
import gc
import weakref
from dataclasses import dataclass, field
from typing import List, Optional

import torch
from torch._subclasses.fake_tensor import FakeTensorMode

MODE = FakeTensorMode()
REFS = []


@dataclass
class StepState:
    step: int
    inputs: List[torch.Tensor] = field(default_factory=list)
    output: Optional[torch.Tensor] = None


STATES = []
for step in range(5):
    s = StepState(step)
    for k in range(2):
        s.inputs.append(MODE.from_tensor(torch.randn(step + 1, k + 1)))
    s.output = MODE.from_tensor(torch.randn(step + 1))
    REFS.extend(weakref.ref(t) for t in s.inputs + [s.output])
    STATES.append(s)
del s
gc.collect()
print("real: %d fakes alive, in STATES" % sum(r() is not None for r in REFS))
