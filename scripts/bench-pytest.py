#!/usr/bin/python3
"""bench-pytest.py [FAKEGC] - the pytest plugin's overhead: a suite of 100
small fake-tensor tests (each makes a mode, converts 4 tensors, runs 2 ops
under it, drops all) run by `python3 -m pytest` without and with --fakegc,
5 times each, interleaved; prints the median wall time of each and the
cost per test.
Figures and method: scripts/BENCH.md ("pytest plugin")."""
import os
import statistics
import subprocess
import sys
import tempfile
import time

N, REPEAT = 100, 5
TEST = '''
def test_{i}():
    m = FakeTensorMode()
    xs = [m.from_tensor(torch.randn(2, {k})) for _ in range(4)]
    with m:
        y = (xs[0] * 2 + xs[1]).sum()
    assert y.shape == ()
'''


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    fakegc = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else
                             os.path.join(os.path.dirname(here), "build", "fakegc"))
    d = tempfile.mkdtemp(prefix="fakegc-bench-pytest-")
    with open(os.path.join(d, "test_small.py"), "w") as f:
        f.write("import torch\nfrom torch._subclasses.fake_tensor import FakeTensorMode\n")
        for i in range(N):
            f.write(TEST.format(i=i, k=1 + i % 7))
    env = dict(os.environ, PYTHONPATH=here, FAKEGC=fakegc)
    runs = (("plain", []), ("--fakegc", ["--fakegc"]))
    times = {label: [] for label, _ in runs}
    for _ in range(REPEAT):      # interleaved: plain, --fakegc, plain, ...
        for label, opts in runs:
            t0 = time.perf_counter()
            r = subprocess.run(["/usr/bin/python3", "-m", "pytest", "-q", "-p", "fakegc_pytest",
                                "-p", "no:cacheprovider"] + opts + ["test_small.py"], cwd=d,
                               env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               text=True)
            times[label].append(time.perf_counter() - t0)
            if r.returncode != 0:
                print(r.stdout[-2000:])
                return 1
    rows = [(label, statistics.median(times[label]), times[label]) for label, _ in runs]
    base = rows[0][1]
    print("pytest, %d small fake-tensor tests, median of %d interleaved runs (wall, s):"
          % (N, REPEAT))
    for label, med, times in rows:
        print("  %-9s %6.2f s  (runs: %s)" % (label, med, ", ".join("%.2f" % t for t in times)))
    print("  overhead: %.2fx, %.1f ms per test" % (rows[1][1] / base,
                                                   (rows[1][1] - base) * 1000 / N))
    return 0


if __name__ == "__main__":
    sys.exit(main())
