"""scn.py - a small parser of the fakegc scenario language (.scn), for xref.

    prog = parse_text("a.scn", open("a.scn").read())
    for st in prog.stmts: print(st.line, st.kind)

It parses what fakegc-scenario(5) describes, one statement per line,
keeping for every expression its columns in the (comment-stripped) line so
that xref can rewrite an expectation from its own source text. A line this
parser cannot read becomes a statement of kind "unknown" (with the reason)
rather than an exception: xref lists it as untranslatable. Unbalanced blocks
(`end` without a block, a block without `end`) raise ScnError: nothing of
such a file can be trusted.
"""

import re

KEYWORDS = {"del", "expect", "repeat", "with", "end", "config", "checkpoint",
            "true", "false", "none"}
CMP_OPS = ("==", "!=", "<=", ">=", "<", ">")

_TOKEN_RE = re.compile(r"""
    (?P<ws>\s+)
  | (?P<int>-?[0-9][0-9_]*)
  | (?P<name>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<str>"(?:\\.|[^"\\])*")
  | (?P<op>==|!=|<=|>=|<|>|=|\(|\)|,|\.|\[|\]|:)
""", re.VERBOSE)


class ScnError(Exception):
    """A file-level error: `line` is where it was found."""

    def __init__(self, line, msg):
        super().__init__(msg)
        self.line = line
        self.msg = msg


class LineError(Exception):
    pass


class Tok:
    __slots__ = ("kind", "text", "start", "end", "value")

    def __init__(self, kind, text, start, end, value=None):
        self.kind, self.text, self.start, self.end = kind, text, start, end
        self.value = value

    def __repr__(self):
        return "Tok(%s,%r)" % (self.kind, self.text)


def strip_comment(line):
    """The line without its `#` comment (a `#` inside a string stays)."""
    in_str = False
    i = 0
    while i < len(line):
        c = line[i]
        if in_str:
            if c == "\\":
                i += 2
                continue
            if c == '"':
                in_str = False
        elif c == '"':
            in_str = True
        elif c == "#":
            return line[:i]
        i += 1
    return line


def unquote(text):
    body = text[1:-1]
    out = []
    i = 0
    while i < len(body):
        c = body[i]
        if c == "\\" and i + 1 < len(body):
            out.append(body[i + 1])
            i += 2
            continue
        out.append(c)
        i += 1
    return "".join(out)


def tokenize(text):
    toks = []
    pos = 0
    while pos < len(text):
        m = _TOKEN_RE.match(text, pos)
        if not m:
            raise LineError("unexpected character %r at column %d" % (text[pos], pos + 1))
        kind = m.lastgroup
        s = m.group(kind)
        if kind == "int":
            toks.append(Tok("int", s, m.start(), m.end(), int(s.replace("_", ""))))
        elif kind == "str":
            toks.append(Tok("str", s, m.start(), m.end(), unquote(s)))
        elif kind != "ws":
            toks.append(Tok(kind, s, m.start(), m.end()))
        pos = m.end()
    return toks


# ---------------------------------------------------------------- AST nodes

class Node:
    """An expression. kind: int str bool none name tuple call method attr.
    For call: name, args, kwargs (list of (name, node)). For method: obj,
    name, args, kwargs. For attr: obj, name. start/end: columns."""

    def __init__(self, kind, start, end, **kw):
        self.kind, self.start, self.end = kind, start, end
        self.value = kw.get("value")
        self.name = kw.get("name")
        self.obj = kw.get("obj")
        self.args = kw.get("args", [])
        self.kwargs = kw.get("kwargs", [])
        self.items = kw.get("items", [])

    def __repr__(self):
        return "Node(%s,%s)" % (self.kind, self.name or self.value)


class Stmt:
    """A statement. kind: assign setattr del expr expect checkpoint repeat
    with config unknown. `body` for blocks; `end_line` for blocks."""

    def __init__(self, kind, line, text, **kw):
        self.kind, self.line, self.text = kind, line, text
        self.__dict__.update(kw)


class _Parser:
    def __init__(self, toks):
        self.toks = toks
        self.i = 0

    def peek(self, k=0):
        j = self.i + k
        return self.toks[j] if j < len(self.toks) else None

    def at(self, kind, text=None, k=0):
        t = self.peek(k)
        return t is not None and t.kind == kind and (text is None or t.text == text)

    def take(self, kind=None, text=None):
        t = self.peek()
        if t is None:
            raise LineError("unexpected end of line")
        if (kind and t.kind != kind) or (text and t.text != text):
            raise LineError("expected %s, found %r" % (text or kind, t.text))
        self.i += 1
        return t

    def done(self):
        return self.i >= len(self.toks)

    def expr(self):
        node = self.primary()
        while self.at("op", "."):
            self.take()
            nt = self.take("name")
            if self.at("op", "("):
                args, kwargs, end = self.arglist()
                node = Node("method", node.start, end, obj=node, name=nt.text,
                            args=args, kwargs=kwargs)
            else:
                node = Node("attr", node.start, nt.end, obj=node, name=nt.text)
        if self.at("op", "["):
            raise LineError("indexing with [] is not part of the language")
        return node

    def arglist(self):
        self.take("op", "(")
        args, kwargs = [], []
        if self.at("op", ")"):
            return args, kwargs, self.take().end
        while True:
            if self.at("name") and self.at("op", "=", 1):
                k = self.take().text
                self.take()
                kwargs.append((k, self.expr()))
            else:
                if kwargs:
                    raise LineError("positional argument after keyword argument")
                args.append(self.expr())
            if self.at("op", ","):
                self.take()
                if self.at("op", ")"):
                    return args, kwargs, self.take().end
                continue
            return args, kwargs, self.take("op", ")").end

    def primary(self):
        t = self.peek()
        if t is None:
            raise LineError("expected an expression")
        if t.kind == "int":
            self.take()
            return Node("int", t.start, t.end, value=t.value)
        if t.kind == "str":
            self.take()
            return Node("str", t.start, t.end, value=t.value)
        if t.kind == "name":
            self.take()
            if t.text in ("true", "false"):
                return Node("bool", t.start, t.end, value=(t.text == "true"))
            if t.text == "none":
                return Node("none", t.start, t.end)
            if t.text in KEYWORDS:
                raise LineError("keyword %r in an expression" % t.text)
            if self.at("op", "("):
                args, kwargs, end = self.arglist()
                return Node("call", t.start, end, name=t.text, args=args, kwargs=kwargs)
            return Node("name", t.start, t.end, name=t.text)
        if t.kind == "op" and t.text == "(":
            self.take()
            items = [self.expr()]
            tuple_ = False
            while self.at("op", ","):
                self.take()
                tuple_ = True
                if self.at("op", ")"):
                    break
                items.append(self.expr())
            end = self.take("op", ")").end
            if not tuple_:
                return items[0]
            return Node("tuple", t.start, end, items=items)
        raise LineError("unexpected %r" % t.text)


def _parse_line(lineno, raw):
    """One statement from one line, or None for a blank line. Block openers
    come back with an empty body; `end` as kind "end"."""
    text = strip_comment(raw)
    if not text.strip():
        return None
    try:
        toks = tokenize(text)
        p = _Parser(toks)
        first = p.peek()
        if first.kind == "name" and first.text == "end" and len(toks) == 1:
            return Stmt("end", lineno, text)
        if first.kind == "name" and first.text == "del":
            p.take()
            names = [p.take("name").text]
            while p.at("op", ","):
                p.take()
                names.append(p.take("name").text)
            if not p.done():
                raise LineError("unexpected %r after del" % p.peek().text)
            return Stmt("del", lineno, text, names=names)
        if first.kind == "name" and first.text == "checkpoint":
            p.take()
            name = p.take("str").value
            if not p.done():
                raise LineError("unexpected %r" % p.peek().text)
            return Stmt("checkpoint", lineno, text, name=name)
        if first.kind == "name" and first.text == "config":
            p.take()
            key = p.take("name").text
            p.take("op", "=")
            val = p.expr()
            if not p.done():
                raise LineError("unexpected %r" % p.peek().text)
            return Stmt("config", lineno, text, key=key, value=val)
        if first.kind == "name" and first.text in ("repeat", "with"):
            p.take()
            e = p.expr()
            if not p.done():
                raise LineError("unexpected %r" % p.peek().text)
            return Stmt(first.text, lineno, text, expr=e, body=[])
        if first.kind == "name" and first.text == "expect":
            p.take()
            lhs = p.expr()
            op = rhs = None
            if p.at("op") and p.peek().text in CMP_OPS:
                op = p.take().text
                rhs = p.expr()
            msg = None
            if p.at("op", ","):
                p.take()
                msg = p.take("str").value
            if not p.done():
                raise LineError("unexpected %r in expect" % p.peek().text)
            return Stmt("expect", lineno, text, lhs=lhs, op=op, rhs=rhs, message=msg,
                        indent=raw[:len(raw) - len(raw.lstrip())])
        e = p.expr()
        if p.at("op", "="):
            p.take()
            val = p.expr()
            if not p.done():
                raise LineError("unexpected %r" % p.peek().text)
            if e.kind == "name":
                return Stmt("assign", lineno, text, name=e.name, value=val)
            if e.kind == "attr":
                return Stmt("setattr", lineno, text, target=e.obj, attr=e.name, value=val)
            raise LineError("cannot assign to this expression")
        if not p.done():
            raise LineError("unexpected %r" % p.peek().text)
        return Stmt("expr", lineno, text, expr=e)
    except LineError as err:
        # A block opener we cannot read still opens a block: keep the
        # structure so the matching `end` lines up.
        stripped = text.strip()
        opener = stripped.split(None, 1)[0] if stripped else ""
        return Stmt("unknown", lineno, text, reason="cannot parse: %s" % err,
                    opener=opener in ("repeat", "with"), body=[])


class Program:
    def __init__(self, path, lines, stmts):
        self.path, self.lines, self.stmts = path, lines, stmts


def parse_text(path, src):
    lines = src.split("\n")
    root = []
    stack = [(None, root)]
    for n, raw in enumerate(lines, start=1):
        st = _parse_line(n, raw.rstrip("\r"))
        if st is None:
            continue
        if st.kind == "end":
            if len(stack) == 1:
                raise ScnError(n, "`end` without an open block")
            opener, _ = stack.pop()
            opener.end_line = n
            continue
        stack[-1][1].append(st)
        if st.kind in ("repeat", "with") or (st.kind == "unknown" and st.opener):
            stack.append((st, st.body))
    if len(stack) > 1:
        opener = stack[-1][0]
        raise ScnError(opener.line, "block opened here has no `end`")
    return Program(path, lines, root)


def parse_file(path):
    with open(path, encoding="utf-8") as f:
        return parse_text(path, f.read())
