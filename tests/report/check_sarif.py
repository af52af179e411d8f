#!/usr/bin/env python3
"""check_sarif.py FAKEGC SRC - SARIF 2.1.0 and GitHub annotations of a
failing `run`, `record` and `stress`, each SARIF validated by Microsoft's
SARIF multitool (`sarif-multitool validate`, installed by scripts/deps.sh;
its log read back: it exits 0 even when it finds errors) and by the SARIF
2.1.0 JSON schema shipped in that npm package (python3-jsonschema: the
multitool says nothing of a value outside an enum). Then what they say:
results at the program's lines with the holder in the message, one rule per
leak class or expectation kind, the github commands escaped. The record
part needs torch (skipped without it, said so)."""
import json
import os
import re
import subprocess
import sys

import jsonschema

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from checks import check, in_tmp, runner  # noqa: E402

FAKEGC, SRC = sys.argv[1], sys.argv[2]
CI = os.environ.get("CI") == "true"



def multitool_dir():
    d = os.environ.get("FAKEGC_NPM_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "fakegc", "npm")
    return os.path.join(d, "node_modules")

run = runner(FAKEGC, timeout=300)


def validate(path, tmp):
    """Errors of the multitool's log and of the JSON schema, as strings."""
    mt = os.path.join(multitool_dir(), ".bin", "sarif-multitool")
    log = os.path.join(tmp, "validate.sarif")
    p = subprocess.run([mt, "validate", "--output", log, path],
                       capture_output=True, text=True, timeout=300)
    errors = []
    if p.returncode != 0 or not os.path.exists(log):
        errors.append(f"multitool exit {p.returncode}: {p.stdout[-300:]} {p.stderr[-300:]}")
    else:
        for r in json.load(open(log))["runs"]:
            errors += [f"{x['ruleId']}: {x['message'].get('text', '')[:200]}"
                       for x in r.get("results", []) if x.get("level") == "error"]
            for inv in r.get("invocations", []):
                errors += [f"tool: {n['message'].get('text', '')[:200]}"
                           for n in inv.get("toolExecutionNotifications", [])
                           if n.get("level") == "error"]
        os.unlink(log)
    schema = json.load(open(os.path.join(multitool_dir(), "@microsoft", "sarif-multitool-linux",
                                         "sarif-2.1.0.json")))
    v = jsonschema.Draft7Validator(schema)
    errors += [f"schema {'/'.join(map(str, e.absolute_path))}: {e.message[:200]}"
               for e in v.iter_errors(json.load(open(path)))]
    return errors


def valid(path, tmp, what):
    errors = validate(path, tmp)
    for e in errors:
        print(f"  {what}: {e}")
    check(not errors, f"{what}: the SARIF validates ({len(errors)} errors)")
    return json.load(open(path))


def results(doc):
    check(doc.get("version") == "2.1.0" and len(doc.get("runs", [])) == 1, "one 2.1.0 run")
    r = doc["runs"][0]
    rules = [x["id"] for x in r["tool"]["driver"]["rules"]]
    for x in r["results"]:
        check(rules[x["ruleIndex"]] == x["ruleId"], f"ruleIndex points at {x['ruleId']}")
    return r["results"], rules


def the_validator_sees_errors(tmp):
    """The validation itself: a broken document is rejected by both."""
    bad = os.path.join(tmp, "bad.sarif")
    for breaks in ('"startLine": 0', '"level": "fatal"'):
        json.dump(json.loads(json.dumps(
            {"version": "2.1.0", "runs": [{"tool": {"driver": {"name": "x", "version": "1"}},
             "results": [{"ruleId": "r", "message": {"text": "m"}, "level": "error",
                          "locations": [{"physicalLocation": {"artifactLocation": {"uri": "a"},
                                                              "region": {"startLine": 1}}}]}]}]}
        ).replace('"startLine": 1', breaks if "startLine" in breaks else '"startLine": 1')
         .replace('"level": "error"', breaks if "level" in breaks else '"level": "error"')),
            open(bad, "w"))
        check(validate(bad, tmp), f"a SARIF with {breaks} is rejected")


def check_run(tmp):
    scn = os.path.join(tmp, "memo, 100% hit.scn")   # a name that needs escaping in a URI
    with open(scn, "w") as f:
        f.write('m = fake_mode()\nt = empty(4)\nf = m.fake(t)\nkeep = f\n'
                'expect m.memo_meta == 0, "the meta memo is empty"\nexpect live("mode") == 1\n')
    out = os.path.join(tmp, "run.sarif")
    rc, stdout, err = run("run", "--sarif", out, "--format", "github", scn)
    check(rc == 1, f"run: exit 1 (got {rc}: {err})")
    doc = valid(out, tmp, "run --sarif")
    res, rules = results(doc)
    check("fakegc/expect/memo_meta" in rules, f"run: a rule per expectation kind: {rules}")
    x = next((x for x in res if x["ruleId"] == "fakegc/expect/memo_meta"), None)
    check(x is not None and x["locations"][0]["physicalLocation"]["region"]["startLine"] == 5,
          "run: the failed expectation at the .scn line 5")
    uri = x["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] if x else ""
    check(uri.startswith("file:///") and "memo%2C%20100%25%20hit.scn" in uri,
          f"run: the file as a percent-encoded URI: {uri}")
    check("the meta memo is empty" in (x or {}).get("message", {}).get("text", ""),
          "run: the expectation's message in the result")
    line = next((l for l in stdout.splitlines() if l.startswith("::error ")), "")
    check(re.match(r"::error file=[^,]*memo%2C 100%25 hit\.scn,line=5,title=fakegc%3A expect "
                   r"m\.memo_meta == 0%2C \"the meta memo is empty\"::expect m\.memo_meta == 0, "
                   r"\"the meta memo is empty\": actual 1 .*, 100%25 hit\.scn:2", line) is not None,
          f"run --format github: escaped properties and data: {line}")
    rc, stdout, _ = run("run", "--format", "sarif", scn)
    check(rc == 1 and json.loads(stdout)["runs"][0]["results"], "run --format sarif on stdout")


def check_warnings(tmp):
    """::warning for a held group that grows (accumulating, not failed), no
    annotation for one held that does not (still reachable): a note in
    SARIF."""
    scn = os.path.join(tmp, "held.scn")
    with open(scn, "w") as f:
        f.write('config end_check = "off"\nm = fake_mode()\nkeep = empty(1)\n'
                'at("prog.py", 4)\nt0 = empty(3)\nkeep.a = m.fake(t0)\nhold(keep.a, "ONE")\n'
                'repeat 6\nat("prog.py", 9)\nt = empty(2)\nkeep.x = m.fake(t)\n'
                'hold(keep.x, "CACHE[0]")\nend\ndel m, t, t0\nverdict(fail_on="lost")\n')
    out = os.path.join(tmp, "held.sarif")
    rc, stdout, err = run("run", "--sarif", out, "--format", "github", scn)
    lines = [l for l in stdout.splitlines() if l.startswith("::")]
    check(rc == 0 and len(lines) == 1 and lines[0].startswith(
        "::warning file=prog.py,line=9,title=fakegc accumulating%3A 6 fake tensors::"),
        f"held, not failed: one ::warning, the growing group's (exit {rc}): {lines}")
    res, _ = results(valid(out, tmp, "run --sarif, held groups"))
    held = [x for x in res if x["ruleId"] == "fakegc/still-reachable"]
    check(held and all(x["level"] == "note" for x in held),
          f"still reachable, not growing: a SARIF note: {[x['level'] for x in held]}")


def check_record(tmp):
    p = subprocess.run(["/usr/bin/python3", "-c", "import torch"], capture_output=True)
    if p.returncode != 0:
        print("record part skipped: no torch (scripts/deps.sh installs python3-torch)")
        check(not CI, "torch is there in CI")
        return
    prog = "accumulate.py"
    src = os.path.join(SRC, "tests/record/programs", prog)
    with open(src) as f, open(os.path.join(tmp, prog), "w") as g:
        g.write(f.read())
    out = os.path.join(tmp, "record.sarif")
    rc, stdout, err = run("record", "--sarif", out, "--format", "github", "--", prog, cwd=tmp)
    check(rc == 1, f"record: exit 1 (got {rc}: {err[-300:]})")
    doc = valid(out, tmp, "record --sarif")
    res, rules = results(doc)
    check(rules == ["fakegc/accumulating", "fakegc/lingering"],
          f"record: a rule per leak class found, accumulating and lingering: {rules}")
    fake = [x for x in res if "fake tensors" in x["message"]["text"]]
    check(len(fake) == 1, "record: one result for the fake tensors")
    if fake:
        loc = fake[0]["locations"][0]["physicalLocation"]
        check(loc["artifactLocation"]["uri"] == prog and loc["region"]["startLine"] == 13,
              f"record: the fake tensors at {prog}:13 (from_tensor): {loc}")
        check("held by KEEP: KEEP[0] -> tensor#" in fake[0]["message"]["text"],
              "record: the holder path in the message")
        rel = fake[0].get("relatedLocations", [])
        check(any(r["physicalLocation"]["region"]["startLine"] == 11 for r in rel),
              f"record: the mode's site (line 11) related: {rel}")
    check(all(x["level"] == ("error" if x["ruleId"] == "fakegc/accumulating" else "note")
              for x in res), "record: accumulating fails (errors), lingering is a note")
    lines = [l for l in stdout.splitlines() if l.startswith("::")]
    check(any(l.startswith(f"::error file={prog},line=13,title=fakegc accumulating%3A 5 fake "
                           f"tensors::5 fake tensors in KEEP, +1 per round at {prog}:13. "
                           f"accumulating: 5 fake tensors made at {prog}:13")
              for l in lines), f"record --format github points at {prog}:13, its leak's line "
          f"first: {lines}")
    # --fail-on lost: accumulating is reported, not failed: warnings
    rc, stdout, _ = run("record", "--fail-on", "lost", "--format", "github", "--", prog, cwd=tmp)
    check(rc == 0 and "::warning file=accumulate.py,line=13," in stdout and "::error" not in stdout,
          f"record --fail-on lost: warnings, exit 0 (got {rc}): {stdout[:300]}")



def check_stress(tmp):
    out = os.path.join(tmp, "stress.sarif")
    rc, stdout, err = run("stress", "--inject", "strong-memo", "--steps", "3000", "--out-dir",
                          os.path.join(tmp, "st"), "--sarif", out, "--format", "github")
    check(rc == 1, f"stress: exit 1 (got {rc}: {err})")
    doc = valid(out, tmp, "stress --sarif")
    res, rules = results(doc)
    check(len(res) == 1 and res[0]["ruleId"].startswith("fakegc/expect/"),
          f"stress: one result, an expectation's rule: {rules}")
    if res:
        loc = res[0]["locations"][0]["physicalLocation"]
        check(loc["artifactLocation"]["uri"].endswith("/st/stress-seed-1.scn") and
              loc["region"]["startLine"] > 0, f"stress: at the lifecycle's failing line: {loc}")
        check(res[0]["relatedLocations"][0]["physicalLocation"]["artifactLocation"]["uri"]
              .endswith("stress-seed-1.min.scn"), "stress: the reproducer related")
    check(stdout.startswith("::error file=") and ",line=" in stdout.splitlines()[0],
          f"stress --format github: {stdout[:200]}")
    rc, stdout, _ = run("stress", "--steps", "2000", "--out-dir", os.path.join(tmp, "st2"),
                        "--format", "sarif")
    doc = json.loads(stdout)
    check(rc == 0 and doc["runs"][0]["results"] == [], f"clean stress: no results ({rc})")


def main():
    if not os.path.exists(os.path.join(multitool_dir(), ".bin", "sarif-multitool")):
        print(f"no SARIF multitool under {multitool_dir()}: run scripts/deps.sh")
        return 1 if CI else 77
    return in_tmp([the_validator_sees_errors, check_run, check_warnings, check_record,
                   check_stress], "check_sarif: ok")


sys.exit(main())
