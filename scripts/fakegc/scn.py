"""The .scn writer: statements and their expectations, indented, with
consecutive identical rounds folded into `repeat` blocks."""

from array import array


class Line:
    """One line of the recording. kind: stmt expect open close comment.
    pre: the lines written before it (a tuple, replaced when one is added).
    at: an at() line's rounds, (file, line, rounds, round) once known. A line
    the recorder may change later (pre, at, kind) is its own object; the
    others may be one object shared by every place they occur (Lines)."""
    __slots__ = ("kind", "text", "site", "pre", "at")

    def __init__(self, kind, text, site=""):
        self.kind, self.text, self.site, self.pre = kind, text, site, ()
        self.at = None


class Lines:
    """Shared Line objects for lines that are never changed after they are
    written: a million rounds of `del t1` are one object a million times.
    The table is emptied when it grows past `limit` (values that differ in
    every round: a counter's growing value)."""

    def __init__(self, limit=1 << 16):
        self.table, self.limit = {}, limit

    def get(self, kind, text, site=""):
        k = (kind, text, site)
        ln = self.table.get(k)
        if ln is None:
            if len(self.table) >= self.limit:
                self.table.clear()
            ln = self.table[k] = Line(kind, text, site)
        return ln


class Units:
    """The statements of a recording, each with the expect lines that follow
    it: (Line, [expect Line]) by index, kept as where each starts in one
    list of lines (a million-round recording makes no object per unit)."""

    def __init__(self, lines):
        self.lines = lines
        st = array("q")
        for i, ln in enumerate(lines):
            if ln.kind != "expect" or i == 0:
                st.append(i)
        st.append(len(lines))
        self.starts = st

    def __len__(self):
        return len(self.starts) - 1

    def stmt(self, i):
        return self.lines[self.starts[i]]

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        a, b = self.starts[i], self.starts[i + 1]
        return self.lines[a], self.lines[a + 1:b]

    def __iter__(self):
        return (self[i] for i in range(len(self)))


def tup(xs):
    xs = [int(x) for x in xs]
    return "(" + ", ".join(map(str, xs)) + ("," if len(xs) == 1 else "") + ")"


def esc(text):
    return text.replace("\\", "\\\\").replace('"', '\\"')


def fmt(ln, depth):
    s = "  " * depth + ln.text
    if ln.site:
        s = s.ljust(40) + "  # " + ln.site
    return s


def flat(units, depth=0, expects=True):
    out = []
    for ln, ex in units:
        if ln.kind == "close":
            depth -= 1
        out.append(fmt(ln, depth))
        if ln.kind == "open":
            depth += 1
        if expects:
            out += [fmt(e, depth) for e in ex]
    return out


def balanced(kinds):
    d = 0
    for k in kinds:
        d += 1 if k == "open" else -1 if k == "close" else 0
        if d < 0:
            return False
    return d == 0


def batch_units(units, window=256, min_units=3):
    """Consecutive rounds of identical statements (expects aside) become
    `repeat N-1` and then the last round in full, with its expectations.
    Inside the repeat, an expectation is kept where it is the same in every
    round, and dropped where it is not (a counter that grows per round)."""
    # an at() with rounds matches the same at() of another round: in the
    # repeat it is written with the step its round takes per iteration
    stmts = [units.stmt(i) for i in range(len(units))] if isinstance(units, Units) \
        else [ln for ln, _ in units]
    ids = {}
    h = [ids.setdefault((ln.kind, ln.text, ln.site) if ln.at is None else ("at",) + ln.at[:3],
                        len(ids)) for ln in stmts]
    kinds = [ln.kind for ln in stmts]
    del stmts, ids
    nxt = {}
    pos_next = array("q", bytes(8 * len(h)))    # the next unit of the same key, -1: none
    for i in range(len(h) - 1, -1, -1):
        pos_next[i] = nxt.get(h[i], -1)
        nxt[h[i]] = i
    del nxt
    out, i, depth, n = [], 0, 0, len(h)
    while i < n:
        best = None
        j, tries = pos_next[i], 0
        while j >= 0 and j - i <= window and tries < 16:
            p = j - i
            tries += 1
            if h[i:j] == h[j:j + p] and balanced(kinds[i:j]):
                k = 2
                while h[i:j] == h[i + k * p:i + (k + 1) * p]:
                    k += 1
                if p * (k - 1) >= min_units and (best is None or p * k > best[0] * best[1]):
                    best = (p, k)
            j = pos_next[j]
        if best is None:
            ln, ex = units[i]
            if ln.kind == "close":
                depth -= 1
            out.append(fmt(ln, depth))
            if ln.kind == "open":
                depth += 1
            out += [fmt(e, depth) for e in ex]
            i += 1
            continue
        p, k = best
        out.append("  " * depth + "repeat %d   # %d identical rounds; the last one follows "
                   "with its expectations" % (k - 1, k))
        body = []
        for u in range(p):
            ln, ex = units[i + u]
            if ln.at is not None:
                fn_, ln_, total, r0 = ln.at
                step = units[i + p + u][0].at[3] - r0
                if step < 0 or any(units[i + r * p + u][0].at[3] - r0 != r * step
                                   for r in range(2, k)):
                    step = 0
                ln = Line("stmt", 'at("%s", %s, %d, %d, %d)' % (fn_, ln_, r0, total, step))
            same = all([e.text for e in units[i + r * p + u][1]] == [e.text for e in ex]
                       for r in range(1, k - 1))
            body.append((ln, ex if same else []))
        out += flat(body, depth + 1)
        out.append("  " * depth + "end")
        out += flat(units[i + (k - 1) * p:i + k * p], depth)
        i += k * p
    return out


