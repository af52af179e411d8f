"""Sparse, quantized and other layouts: a COO tensor converts (no storage
memo entry), a CSR tensor and a conjugate view are misses of a stand-alone
MetaConverter, a quantized tensor raises UnsupportedFakeTensorException."""
import torch
from torch._subclasses.fake_tensor import FakeTensorMode, UnsupportedFakeTensorException
from torch._subclasses.meta_utils import MetaConverter

mode = FakeTensorMode()
coo = torch.sparse_coo_tensor(torch.tensor([[0, 1, 2], [2, 0, 1]]), torch.ones(3), (3, 3))
fcoo = mode.from_tensor(coo)
q = torch.quantize_per_tensor(torch.zeros(4, 4), 0.1, 0, torch.quint8)
try:
    mode.from_tensor(q)
except UnsupportedFakeTensorException:
    pass
mc = MetaConverter()
csr = torch.sparse_csr_tensor(torch.tensor([0, 1, 2]), torch.tensor([0, 1]), torch.ones(2), (2, 2))
same = mc(csr)
assert same is csr
z = torch.zeros(3, dtype=torch.complex64)
zc = z.conj()
mc(zc)
dense = torch.randn(5, 5)
mdense = mc(dense)
del dense
del coo, fcoo, q, csr, same
