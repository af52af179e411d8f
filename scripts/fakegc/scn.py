"""The .scn writer: statements and their expectations, indented, with
consecutive identical rounds folded into `repeat` blocks."""


class Line:
    __slots__ = ("kind", "text", "site", "pre", "at")   # kind: stmt expect open close

    def __init__(self, kind, text, site=""):
        self.kind, self.text, self.site, self.pre = kind, text, site, []
        self.at = None      # at() with rounds: (file, line, rounds, round)


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
    keys = [(ln.kind, ln.text, ln.site) if ln.at is None else ("at",) + ln.at[:3]
            for ln, _ in units]
    ids = {}
    h = [ids.setdefault(k, len(ids)) for k in keys]
    kinds = [ln.kind for ln, _ in units]
    nxt = {}
    pos_next = [None] * len(h)
    for i in range(len(h) - 1, -1, -1):
        pos_next[i] = nxt.get(h[i])
        nxt[h[i]] = i
    out, i, depth, n = [], 0, 0, len(h)
    while i < n:
        best = None
        j, tries = pos_next[i], 0
        while j is not None and j - i <= window and tries < 16:
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


