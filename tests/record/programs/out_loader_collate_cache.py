"""A DataLoader (num_workers=0) whose collate_fn also returns a fake of the
batch, for shape checks, and caches it by the batch's shape: 10 samples in
batches of 4 are two shapes, (4, 6) and (2, 6), whatever the epoch. Three
epochs; real PyTorch 1.13.1 keeps the 2 cached fakes, made in the first
epoch and only hit after: bounded, no growth."""
import gc
import weakref

import torch
from torch.utils.data import DataLoader, Dataset
from torch._subclasses.fake_tensor import FakeTensorMode

REFS = []


class Samples(Dataset):
    def __len__(self):
        return 10

    def __getitem__(self, i):
        return torch.full((6,), float(i))


class ShapeCheckingCollate:
    def __init__(self):
        self.mode = FakeTensorMode()
        self.by_shape = {}

    def __call__(self, samples):
        batch = torch.stack(samples)
        key = tuple(batch.shape)
        if key not in self.by_shape:
            fake = self.mode.from_tensor(batch)
            REFS.append(weakref.ref(fake))
            self.by_shape[key] = fake
        return batch, self.by_shape[key]


collate = ShapeCheckingCollate()
loader = DataLoader(Samples(), batch_size=4, collate_fn=collate, num_workers=0)
total = 0.0
for epoch in range(3):
    for batch, meta in loader:
        assert meta.shape == batch.shape
        total += float(batch.sum())
del batch, meta
gc.collect()
print("real: %d fakes alive, in collate.by_shape" % sum(r() is not None for r in REFS))
