#!/usr/bin/python3
"""check.py FAKEGC ROOT - the pytest plugin on tests/pytest_plugin/test_suite.py:
with --fakegc exactly the tests named *_leaks fail, each failure message
giving the leak's class, site and holder; the rest pass (a module-scoped
fixture's fakes are not charged to the test that uses it); --fakegc-dir
keeps one recording per test; without --fakegc every test passes. Fixtures
of module and session scope: what they keep is never charged to a test,
what a test makes through their mode and keeps is. A test's fakegc.mark()
is named in its failure message ("since mark 'filling CACHE'").
Exit 77 (skipped) without torch or pytest."""
import os
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET


def run(root, fakegc, *opts):
    d = tempfile.mkdtemp(prefix="fakegc-plugin-")
    xml = os.path.join(d, "r.xml")
    env = dict(os.environ, PYTHONPATH=os.path.join(root, "scripts"), FAKEGC=fakegc)
    r = subprocess.run(["/usr/bin/python3", "-m", "pytest", "-p", "fakegc_pytest", "-q",
                        "-p", "no:cacheprovider", "--junitxml", xml] + list(opts) +
                       [os.path.join(root, "tests", "pytest_plugin", "test_suite.py")],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env,
                       cwd=d)
    cases = {}
    for tc in ET.parse(xml).getroot().iter("testcase"):
        f = tc.find("failure")
        cases[tc.get("name")] = None if f is None else (f.get("message", "") + (f.text or ""))
    return r, cases, d


def line_of(root, text):
    """The line of test_suite.py that holds text (its first)."""
    with open(os.path.join(root, "tests", "pytest_plugin", "test_suite.py")) as f:
        for i, ln in enumerate(f, 1):
            if text in ln:
                return i
    raise SystemExit("test_suite.py has no line with %r" % text)


def main(fakegc, root):
    fakegc, root = os.path.abspath(fakegc), os.path.abspath(root)
    for mod in ("torch", "pytest"):
        if subprocess.run(["/usr/bin/python3", "-c", "import " + mod]).returncode:
            print("skipped: %s is not importable by /usr/bin/python3" % mod)
            return 77
    bad = []
    keep = tempfile.mkdtemp(prefix="fakegc-plugin-keep-")
    r, cases, _ = run(root, fakegc, "--fakegc", "--fakegc-dir", keep)
    failed = sorted(n for n, m in cases.items() if m is not None)
    want = sorted(n for n in cases if n.endswith("_leaks"))
    if not want or failed != want:
        bad.append("failed %s, the leaking ones are %s\n%s" % (failed, want, r.stdout[-3000:]))
    for test, said in (
            ("test_appends_to_module_list_leaks",
             ("accumulating: 6 fake tensors made at test_suite.py:%d since mark 'filling "
              "CACHE'," % line_of(root, "CACHE.append(m.from_tensor"),
              "held by the program at CACHE[0]")),
            ("test_keeps_one_in_a_global_leaks",
             ("still reachable: 1 fake tensor made at test_suite.py:%d, held by the program "
              "at KEPT" % line_of(root, "KEPT = m.from_tensor"),)),
            # a fixture's mode (module scope), made before the test: what the
            # test makes through it and keeps is the test's
            ("test_keeps_fakes_of_module_fixture_mode_leaks",
             ("accumulating: 5 fake tensors made at test_suite.py:%d" % line_of(
                 root, "FIXTURE_CACHE.append("), "held by the program at FIXTURE_CACHE[0]")),
            ("test_keeps_op_outputs_of_session_fixture_mode_leaks",
             ("accumulating: 4 fake tensors made at test_suite.py:%d" % line_of(
                 root, "OUTS.append("), "held by the program at OUTS[0]"))):
        m = cases.get(test) or ""
        for s in said:
            if s not in m:
                bad.append("%s: the failure message lacks %r: %s" % (test, s, m[:600]))
    for test in ("test_uses_module_fixture_clean", "test_ops_under_session_fixture_clean",
                 "test_keeps_fakes_of_module_fixture_mode_leaks"):
        m = cases.get(test) or ""
        for fixture in ("m.KEEP = [m.from_tensor(torch.randn(3))",
                        "m.KEEP = [m.from_tensor(torch.randn(2))"):
            if "test_suite.py:%d" % line_of(root, fixture) in m:
                bad.append("%s is charged with its fixture's own fakes: %s" % (test, m[:600]))
    if "1 left fake tensors behind" in r.stdout or "test_appends_to_module_list_leaks:" \
            not in r.stdout:
        bad.append("no session summary of the leaking tests:\n%s" % r.stdout[-1500:])
    kept = sorted(os.listdir(keep))
    if len(kept) != len(cases) or not all(k.endswith(".scn") for k in kept):
        bad.append("--fakegc-dir kept %s for %d tests" % (kept, len(cases)))
    r, cases, _ = run(root, fakegc)
    if any(m is not None for m in cases.values()):
        bad.append("without --fakegc some test failed: %s" % cases)
    for b in bad:
        print("FAIL: " + b)
    if bad:
        return 1
    print("ok: --fakegc fails exactly %s, with class, site and holder" % want)
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:3]))
