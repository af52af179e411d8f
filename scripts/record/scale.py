"""scale.py [N [K]] - the recorder at scale: N fakes made in one loop under a
FakeTensorMode, one fresh 4x4 tensor converted per round, and every Kth fake
kept in a module-level list (K=0 keeps none). Default N=1000000, K=1000: the
run ends holding N/K fakes in KEPT, one more per K rounds (accumulating),
and every other fake, real tensor and memo entry gone."""
import sys

import torch
from torch._subclasses.fake_tensor import FakeTensorMode

N = int(sys.argv[1]) if len(sys.argv) > 1 else 1000000
K = int(sys.argv[2]) if len(sys.argv) > 2 else 1000
KEPT = []
mode = FakeTensorMode()
for i in range(N):
    f = mode.from_tensor(torch.empty(4, 4))
    if K and i % K == K - 1:
        KEPT.append(f)
del f
