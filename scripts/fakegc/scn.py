"""The .scn writer: statements and their expectations, indented, with
consecutive identical rounds folded into `repeat` blocks."""

import marshal


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


def tup(xs):
    xs = [int(x) for x in xs]
    return "(" + ", ".join(map(str, xs)) + ("," if len(xs) == 1 else "") + ")"


def esc(text):
    return text.replace("\\", "\\\\").replace('"', '\\"')


def fmt(ln, depth):
    """A line (kind, text, site, at) as written at depth."""
    s = "  " * depth + ln[1]
    if ln[2]:
        s = s.ljust(40) + "  # " + ln[2]
    return s


def flat(units, depth=0, expects=True):
    for ln, ex in units:
        if ln[0] == "close":
            depth -= 1
        yield fmt(ln, depth)
        if ln[0] == "open":
            depth += 1
        if expects:
            for e in ex:
                yield fmt(e, depth)


def units_of(chunks):
    """The statements of a recording, each with the expect lines that follow
    it, (line, [expect lines]), from its lines in chunks (lists), in chunks;
    an expect line first of all is a statement."""
    cur = None       # the last statement so far: expect lines may follow it
    for chunk in chunks:
        if not chunk:
            continue
        st = [x for x, ln in enumerate(chunk) if ln[0] != "expect"]
        if cur is None and (not st or st[0]):
            st.insert(0, 0)
        if not st:
            cur[1].extend(chunk)
            continue
        if cur is not None:
            cur[1].extend(chunk[:st[0]])
        out = [cur] if cur is not None else []
        st.append(len(chunk))
        out += [(chunk[a], chunk[a + 1:b]) for a, b in zip(st, st[1:])]
        cur = out.pop()
        yield out
    if cur is not None:
        yield [cur]


def balanced(kinds):
    d = 0
    for k in kinds:
        d += 1 if k == "open" else -1 if k == "close" else 0
        if d < 0:
            return False
    return d == 0


def batch_units(units, window=256, min_units=3, cap=1 << 16):
    """Consecutive rounds of identical statements (expects aside) become
    `repeat N-1` and then the last round in full, with its expectations.
    Inside the repeat, an expectation is kept where it is the same in every
    round, and dropped where it is not (a counter that grows per round).
    units: (line, [expect lines]) in chunks (lists), read as they go; what is
    held is the window ahead and the run being folded, at most `cap` units
    (a longer run is folded into several repeat blocks, each followed by
    its last round). Yields the lines written."""
    src = iter(units)
    buf, keys, kinds = [], [], []
    done = []

    def fill(n):
        """Units up to index n-1 read, if the stream has them: len(buf)."""
        while len(buf) < n and not done:
            us = next(src, None)
            if us is None:
                done.append(True)
                break
            buf.extend(us)
            # an at() with rounds is the same at() of another round when its
            # file, line and rounds are
            keys.extend([("at",) + u[0][3][:3] if u[0][3] is not None else u[0][:3]
                         for u in us])
            kinds.extend([u[0][0] for u in us])
        return len(buf)

    i, depth = 0, 0
    while True:
        if i >= 8192:
            del buf[:i], keys[:i], kinds[:i]
            i = 0
        n = fill(i + 2 * window + 1)
        if i >= n:
            return
        best, key, j, tries, last = None, keys[i], i, 0, min(i + window, n - 1) + 1
        while tries < 16:
            try:
                j = keys.index(key, j + 1, last)
            except ValueError:
                break
            p = j - i
            tries += 1
            if keys[i:j] == keys[j:j + p] and balanced(kinds[i:j]):
                k = 2
                pat = keys[i:j]
                while p * (k + 1) <= cap:
                    e = i + (k + 1) * p
                    if e > len(buf):
                        fill(e)
                    if pat != keys[e - p:e]:
                        break
                    k += 1
                if p * (k - 1) >= min_units and (best is None or p * k > best[0] * best[1]):
                    best = (p, k)
        if best is None:
            ln, ex = buf[i]
            if ln[0] == "close":
                depth -= 1
            yield fmt(ln, depth)
            if ln[0] == "open":
                depth += 1
            for e in ex:
                yield fmt(e, depth)
            i += 1
            continue
        p, k = best
        yield ("  " * depth + "repeat %d   # %d identical rounds; the last one follows "
               "with its expectations" % (k - 1, k))
        body = []
        for u in range(p):
            ln, ex = buf[i + u]
            if ln[3] is not None:
                fn_, ln_, total, r0 = ln[3]
                step = buf[i + p + u][0][3][3] - r0
                if step < 0 or any(buf[i + r * p + u][0][3][3] - r0 != r * step
                                   for r in range(2, k)):
                    step = 0
                ln = ("stmt", 'at("%s", %s, %d, %d, %d)' % (fn_, ln_, r0, total, step), "",
                      None)
            same = all([e[1] for e in buf[i + r * p + u][1]] == [e[1] for e in ex]
                       for r in range(1, k - 1))
            body.append((ln, ex if same else []))
        yield from flat(body, depth + 1)
        yield "  " * depth + "end"
        yield from flat(buf[i + (k - 1) * p:i + k * p], depth)
        i += k * p


class Spill:
    """The recording's lines written as they go, to an unnamed temporary
    file (marshal chunks, each after its length, of (kind, text, site, at) tuples), so that what a
    long run keeps in memory stays flat. An at() line's rounds are known at
    the end only: its loops (keys) are kept here by number, and read() asks
    resolve(file, line, [(key, round)]) for its (text, at)."""

    def __init__(self):
        import tempfile
        self.f = tempfile.TemporaryFile()
        self.keys, self.kid = [], {}
        self.count = 0

    def key(self, k):
        i = self.kid.get(k)
        if i is None:
            i = self.kid[k] = len(self.keys)
            self.keys.append(k)
        return i

    def write(self, lines):
        """Append lines (Line objects; their pre lines first)."""
        recs = []
        ap = recs.append
        for ln in lines:
            if ln.pre:
                for q in ln.pre:
                    ap((q.kind, q.text, q.site, None))
            at = ln.at
            if at is None:
                ap((ln.kind, ln.text, ln.site, None))
            else:
                c = list(at)
                c[2::2] = [self.key(k) for k in at[2::2]]
                ap((ln.kind, ln.text, ln.site, tuple(c)))
        self.count += len(recs)
        b = marshal.dumps(recs)
        self.f.write(len(b).to_bytes(8, "little") + b)

    def read(self, resolve):
        """The lines written, in order, each (kind, text, site, at), an
        at() line's text and rounds resolved; in chunks (lists)."""
        f, keys = self.f, self.keys
        f.flush()
        f.seek(0)
        while True:
            n = f.read(8)
            if len(n) < 8:
                break
            recs = marshal.loads(f.read(int.from_bytes(n, "little")))
            for x, r in enumerate(recs):
                at = r[3]
                if at is not None:
                    text, at = resolve(at[0], at[1], [(keys[k], rnd) for k, rnd in
                                                      zip(at[2::2], at[3::2])])
                    recs[x] = (r[0], text, r[2], at)
            yield recs

    def close(self):
        self.f.close()
