"""twin_server.py - runs xref's twins in one PyTorch process, torch imported once.

    PYTHON twin_server.py        (PYTHON: /usr/bin/python3 or a launcher of
                                  scripts/torch-root.sh; started by xref.py)

Imports torch and what every twin's prelude imports (translate.py PRELUDE),
then answers on stdout one JSON line: {"torch": VERSION} or {"error": WHY}
(torch not importable; it then exits). Then, per request line on stdin,
{"prog": P, "out": O, "stdout": F1, "stderr": F2, "timeout": S}, it forks a
child that runs P as the module __main__ with sys.argv [P, O] and its
stdout and stderr in F1 and F2, as `PYTHON P O` would; nothing of one twin
reaches the next (each runs in its own process, forked from the server that
has run no twin). It answers {"exit": N} (a signal: -SIG, as subprocess
says) or {"timeout": S} after killing a child that ran S seconds. The server
ends at the end of its stdin, its children with it.

The server's own stdout is for the answers only (fd 1 is moved to stderr, so
that whatever an import prints cannot be taken for one).
"""
import json
import os
import runpy
import select
import signal
import sys
import time
import traceback


# what a first FakeTensorMode imports on 2.x (sympy, dynamo: about 880
# modules, seconds of a twin's time); 1.13.1 has neither
LAZY = ("torch._dynamo", "torch.fx.experimental.symbolic_shapes")


def _imports():
    """What the twins import (translate.py PRELUDE) and what their first mode
    imports, so that no child has to. Nothing runs: no mode, no tensor, no
    cache entry is made here."""
    import gc  # noqa: F401
    import importlib
    import warnings
    with warnings.catch_warnings():     # as the prelude imports them
        warnings.filterwarnings("ignore")
        import torch
        from torch._subclasses.fake_tensor import FakeTensorMode  # noqa: F401
        from torch._subclasses.meta_utils import MetaConverter  # noqa: F401
        if not torch.__version__.startswith("1."):
            for name in LAZY:
                importlib.import_module(name)
    return torch.__version__


def _child(req):
    """Runs in the forked child; never returns."""
    code = 1
    try:
        for fd, path in ((1, req["stdout"]), (2, req["stderr"])):
            f = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
            os.dup2(f, fd)
            os.close(f)
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.close(null)
        sys.argv = [req["prog"], req["out"]]
        sys.path[0] = os.path.dirname(os.path.abspath(req["prog"]))
        runpy.run_path(req["prog"], run_name="__main__")
        code = 0
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
        if not isinstance(e.code, (int, type(None))):
            print(e.code, file=sys.stderr)
    except BaseException:
        traceback.print_exc()
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code & 0xff)


def _wait(pid, timeout):
    """(exit status as subprocess.returncode, or None after a timeout)."""
    deadline = time.monotonic() + timeout
    try:
        pfd = os.pidfd_open(pid)
    except (AttributeError, OSError):
        pfd = None
    try:
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                return None
            if pfd is not None:
                select.select([pfd], [], [], left)
                done, status = os.waitpid(pid, os.WNOHANG)
            else:
                done, status = os.waitpid(pid, os.WNOHANG)
                if not done:
                    time.sleep(min(0.01, left))
            if done:
                return os.waitstatus_to_exitcode(status)
    finally:
        if pfd is not None:
            os.close(pfd)


def main():
    answers = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)
    try:
        version = _imports()
    except BaseException as e:     # torch not importable: say why, as xref.py reports it
        answers.write(json.dumps({"error": "%s: %s" % (type(e).__name__, e)}) + "\n")
        return 0
    answers.write(json.dumps({"torch": version}) + "\n")
    for line in sys.stdin:
        if not line.strip():
            continue
        req = json.loads(line)
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            answers.close()
            _child(req)
        status = _wait(pid, float(req["timeout"]))
        answers.write(json.dumps({"exit": status} if status is not None
                                 else {"timeout": req["timeout"]}) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
