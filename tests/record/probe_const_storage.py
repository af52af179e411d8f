#!/usr/bin/python3
"""probe_const_storage.py [PYTHON] - does a StorageWeakRef keep a storage's
describer id (fk_design.c const_storage_kept)?

PYTHON: a root
of scripts/torch-root.sh (trixie: 2.6, forky: 2.14; its launcher in
$FAKEGC_ROOTS or /var/cache/fakegc/roots), under which this file runs
itself again; 77 (skipped) when that root is absent.

Two ways, on one FakeTensorMode, reading
fake_tensor_converter.meta_converter.describer.lookup_storage after each
gc.collect():
  - `with m: x = torch.tensor(())` (a constant propagated by the mode: the
    converter's constant_storage_mapping keeps a StorageWeakRef of the real
    result's storage), then `del x`;
  - a plain conversion of zeros(3) with a StorageWeakRef of its storage
    kept by the program, then the tensor and the fake dropped, then the ref.
Expected: 2.6 keeps the storage id while the StorageWeakRef lives (1 left
in both cases, 0 once the ref is dropped); 2.14 drops it with the tensor
(0 in every case). Exit 1 when the run says otherwise."""
import gc
import os
import sys

KEPT = {"2.6": (1, 1, 0), "2.14": (0, 0, 0)}


def probe():
    try:
        import torch
        from torch._subclasses.fake_tensor import FakeTensorMode
        from torch.multiprocessing.reductions import StorageWeakRef
    except ImportError as e:
        print("skipped: %s" % e)
        return 77
    line = ".".join(torch.__version__.split("+")[0].split(".")[:2])
    if line not in KEPT:
        print("skipped: torch %s has no row here" % line)
        return 77
    m = FakeTensorMode()
    ids = m.fake_tensor_converter.meta_converter.describer.lookup_storage

    def count():
        gc.collect()
        return len(ids)

    with m:
        x = torch.tensor(())
    del x
    seen = [count()]
    t = torch.zeros(3)
    f = m.from_tensor(t)
    w = StorageWeakRef(t.untyped_storage())
    del f, t
    seen.append(count() - seen[0])
    del w
    seen.append(count() - seen[0])
    seen = tuple(seen)
    if seen != KEPT[line]:
        print("FAIL: torch %s: storage ids left (constant dropped, plain tensor dropped with "
              "a StorageWeakRef kept, ref dropped) %s, want %s" % (line, seen, KEPT[line]))
        return 1
    print("ok: torch %s: storage ids left %s: a StorageWeakRef %s the describer's storage id"
          % (line, seen, "keeps" if seen[0] else "does not keep"))
    return 0


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from probe_view_base import under
    sys.exit(under(sys.argv[1:] or [], probe, __file__))
