"""fakegc's recorder as a library: record a region of a PyTorch program's
fake-tensor lifecycle as a fakegc scenario, and judge it with
`fakegc run RECORDING.scn`.

    import fakegc
    with fakegc.recording("out.scn"):
        ...                       # the region: modes, conversions, ops, deaths
        fakegc.mark("step 3")     # a named mark at this line of the recording

Only what the region makes is recorded: fakes, modes and finalizers that
existed before it are left out of the end-of-region `live()` counts (the
objects that exist are frozen for the region, gc.freeze, so its end walks
only what it made). A mode made before the region and used in it (a test
fixture's) is written where the region first uses it: what the region
makes through it is judged, what it made before is not. The
recording ends as a whole program's does (a full collection, the holders in
the region's frame and its module's globals, `verdict()`); it is written
whole or not at all. One recording at a time (a nested one is refused).
`scripts/record.py` (`fakegc record`) drives the same engine over a whole
program.
"""

import os
import sys

__all__ = ["recording", "mark", "RecordingError"]

_active = None     # the recording in progress, or None
_program = None    # the whole program's recorder (fakegc record), or None


class RecordingError(RuntimeError):
    """A recording could not start (torch missing, one already running)."""


class recording:
    """Context manager: record the region it encloses into `path`.
    fail_on / suppress: as `fakegc record --fail-on / --suppress`; lang: the
    language version the recording may use (1 or 2). program / module_globals:
    the file whose lines are the sites and the globals its holders are found
    from (default: the caller's; a test runner names the test's module)."""

    def __init__(self, path, fail_on=None, suppress=None, lang=1, batch=True, max_events=0,
                 program=None, module_globals=None):
        self.program, self.module_globals = program, module_globals
        self.path = os.path.abspath(path)
        self.fail_on, self.suppress = fail_on, suppress
        self.lang, self.batch, self.max_events = lang, batch, max_events
        self.rec = None
        self.text = None

    def __enter__(self):
        global _active
        if _active is not None:
            raise RecordingError("fakegc.recording: a recording is already in progress "
                                 "(%s)" % _active.path)
        try:
            import torch
            import torch._subclasses.fake_tensor  # noqa: F401
        except ImportError as e:
            raise RecordingError("fakegc.recording: torch is not importable (%s)" % e)
        from .engine import DTYPES, _dtypes
        from . import torch113, torch2
        Recorder = (torch113 if torch.__version__.startswith("1.") else torch2).Recorder
        DTYPES.update(_dtypes(torch))
        frame = sys._getframe(1)
        self.frame = frame
        rec = Recorder(torch, self.program or frame.f_code.co_filename, self.max_events,
                       self.lang)
        rec.before_region()
        rec.install()
        self.old_trace = sys.gettrace()
        rec.rounds.start()
        if rec.rounds.is_prog(frame.f_code):
            frame.f_trace = rec.rounds.local(frame, None)   # the region's own frame counts its loops
        self.rec = rec
        _active = self
        return self

    def __exit__(self, typ, exc, tb):
        global _active
        rec, frame = self.rec, self.frame
        rec.rounds.stop()
        frame.f_trace = None
        sys.settrace(self.old_trace)
        rec.uninstall()
        _active = None
        from .holders import program_roots
        try:
            g = self.module_globals if self.module_globals is not None else frame.f_globals
            rec.finish(program_roots(rec, g, frame, None),
                       self.fail_on, self.suppress)
        except Exception as e:
            rec.broken(e)
        finally:
            rec.end_region()
        extra = ()
        if typ is not None:
            extra = ("the region raised %s: %s (recorded up to there)"
                     % (typ.__name__, str(exc).split("\n")[0][:120]),)
        self.text = rec.render(batch=self.batch, header_extra=extra)
        self.frame = None
        tmp = "%s.%d.tmp" % (self.path, os.getpid())
        with open(tmp, "w") as f:
            f.write(self.text)
        os.replace(tmp, self.path)
        return False

    @property
    def events(self):
        return self.rec.events if self.rec is not None else 0

    @property
    def left_nothing(self):
        """The region left nothing a verdict judges alive: no fake tensor,
        mode or converter it made survived its end's full collection (real
        tensors are the program's data). None when not known (the recorder
        stopped or failed)."""
        left = self.rec.left if self.rec is not None and not self.failed else None
        if left is None:
            return None
        return not any(left.values())

    @property
    def failed(self):
        """The recorder itself failed or refused (its header says where)."""
        return self.rec is not None and (self.rec.internal or self.rec.refused)


def mark(label):
    """A named mark at the caller's line of the recording in progress, a
    region's or (under `fakegc record`) the whole program's; a no-op
    outside one. It is written as `mark("LABEL")`: the verdict says which
    marks each group it judges was made after ("made at prog.py:12 since
    mark 'step 3'"), and the timeline draws it."""
    rec = _active.rec if _active is not None else _program
    if rec is None:
        return
    rec.safe(rec.named_mark, str(label))
