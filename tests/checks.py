"""checks.py - what the Python checks under tests/ share: a failed check is
printed and counted, fakegc runs with its output captured, and the end
says how many failed.

    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    from checks import check, finish, runner
    run = runner(FAKEGC, timeout=300)
    rc, out, err = run("run", "x.scn", cwd=tmp)
    check(rc == 0, f"x.scn: exit 0 (got {rc})")
    return finish("check_x: ok")     # 1 when a check failed, else 0
or, checks of one temporary folder each taking it:
    return in_tmp([check_a, check_b], "check_x: ok")
"""
import subprocess
import tempfile

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def runner(fakegc, timeout):
    """run(*args, cwd=None) -> (exit status, stdout, stderr) of fakegc."""
    def run(*args, cwd=None):
        p = subprocess.run([fakegc, *args], capture_output=True, text=True, timeout=timeout,
                           cwd=cwd)
        return p.returncode, p.stdout, p.stderr
    return run


def in_tmp(checks, ok_line):
    """Each check(tmp) in turn in one temporary folder, then finish(ok_line)."""
    with tempfile.TemporaryDirectory() as tmp:
        for c in checks:
            c(tmp)
    return finish(ok_line)


def finish(ok_line):
    if failures:
        print(f"{len(failures)} check(s) failed")
        return 1
    print(ok_line)
    return 0
