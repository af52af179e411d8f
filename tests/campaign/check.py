#!/usr/bin/env python3
"""check.py - compare merged campaign reports with single-process ones.

  check.py stress ONE.json MERGED.json [--failure]   same lifecycles, steps,
      statements and outcome; with --failure: the merged "failure" is the one
      process's (seed, class, reproducer) and there is one distinct failure
  check.py run ONE.json MERGED.json      the same report apart from timings
      (and object ids, which count objects made earlier in the process)
  check.py same A.json B.json            two merged reports of one campaign
      agree apart from timings, hosts and file names
Exit 0 when they agree, 1 (with the difference printed) when not.
"""
import json
import re
import sys

# what a machine measures rather than the campaign decides: times, the host,
# and the allocator's footprint (it depends on what the process ran before)
TIMING = {"seconds", "cpu_seconds", "steps_per_second", "wall_ms", "host", "footprint_bytes"}


def load(path):
    with open(path) as f:
        return json.load(f)


def strip(v, drop, loose=False):
    """v without the keys in drop, object numbers as #N; loose: memo slots
    as [N] and lists of objects as multisets (both follow the ids)."""
    if isinstance(v, dict):
        return {k: strip(x, drop, loose) for k, x in v.items() if k not in drop}
    if isinstance(v, list):
        items = [strip(x, drop, loose) for x in v]
        if loose and all(isinstance(x, dict) and "kind" in x for x in items):
            items.sort(key=lambda x: json.dumps(x, sort_keys=True))
        return items
    if isinstance(v, str):
        v = re.sub(r"#\d+", "#N", v)
        return re.sub(r"\[\d+\]", "[N]", v) if loose else v
    return v


def fail(msg):
    print("check.py: " + msg)
    sys.exit(1)


def stress(one, merged, failure):
    # a failing shard stops at its first failure, as one process does, so
    # the counts agree only for a clean campaign
    keys = ("seed", "lifecycle", "inject", "weights")
    if not failure:
        keys += ("steps", "statements", "lifecycles", "max_live_objects")
    for k in keys:
        if one.get(k) != merged.get(k):
            fail(f"stress: {k}: one process {one.get(k)!r}, merged {merged.get(k)!r}")
    if (one["failures"] > 0) != (merged["failures"] > 0):
        fail(f"stress: failures: one process {one['failures']}, merged {merged['failures']}")
    if len(merged["shards"]) != merged["merged"]:
        fail("stress: shards listed != merged")
    if not failure:
        if one["failures"]:
            fail("stress: the clean campaign failed")
        return
    a, b = one["failure"], merged["failure"]
    for k in ("seed", "class", "first", "reproducer", "min_statements"):
        if a.get(k) != b.get(k):
            fail(f"stress: failure.{k}: one process {a.get(k)!r}, merged {b.get(k)!r}")
    if merged["failures"] != 1 or len(merged["distinct_failures"]) != 1:
        fail(f"stress: {merged['failures']} distinct failures, expected 1")
    d = merged["distinct_failures"][0]
    if len(d["shards"]) < 2:
        fail(f"stress: the failure was found by shards {d['shards']} only")


def ids(v):
    if isinstance(v, dict):
        return ([v["id"]] if "id" in v else []) + [i for x in v.values() for i in ids(x)]
    if isinstance(v, list):
        return [i for x in v for i in ids(x)]
    return []


def run(one, merged):
    drop = TIMING | {"merged", "merged_by", "shards", "schema", "shard", "campaign_files"}
    loose = ids(one) != ids(merged)
    if loose:
        # object ids count the objects made earlier in the process, and
        # follow from them: peak_bytes (the bytes of names like
        # "tensor#18321"), memo slots and the order of retained objects.
        # They differ between a shard and one process until ids are per
        # scenario; everything else must be equal.
        drop |= {"id", "peak_bytes"}
    a, b = strip(one, drop, loose), strip(merged, drop, loose)
    if a == b:
        return
    fa = [s["file"] for s in one["scenarios"]]
    fb = [s["file"] for s in merged["scenarios"]]
    if fa != fb:
        fail(f"run: scenario lists differ: {len(fa)} vs {len(fb)}; first difference "
             f"{next((x, y) for x, y in zip(fa + [None], fb + [None]) if x != y)}")
    for x, y in zip(a["scenarios"], b["scenarios"]):
        if x != y:
            fail(f"run: {x.get('file')}: one process {json.dumps(x)[:400]}\n"
                 f"  merged {json.dumps(y)[:400]}")
    for k in sorted(set(a) | set(b)):
        if a.get(k) != b.get(k):
            fail(f"run: {k}: one process {a.get(k)!r}, merged {b.get(k)!r}")
    fail("run: reports differ")


def same(x, y):
    drop = TIMING | {"reproduce", "min_file", "file"}
    a, b = strip(x, drop), strip(y, drop)
    a.pop("shards", None), b.pop("shards", None)
    if a != b:
        for k in sorted(set(a) | set(b)):
            if a.get(k) != b.get(k):
                fail(f"same: {k}: {json.dumps(a.get(k))[:300]} vs {json.dumps(b.get(k))[:300]}")
    ls = [(s["shard"], s.get("lifecycles"), s.get("steps"), s.get("scenarios"))
          for s in x["shards"]]
    rs = [(s["shard"], s.get("lifecycles"), s.get("steps"), s.get("scenarios"))
          for s in y["shards"]]
    if ls != rs:
        fail(f"same: shards {ls} vs {rs}")


def main(argv):
    if len(argv) < 4:
        print(__doc__)
        return 2
    one, other = load(argv[2]), load(argv[3])
    if argv[1] == "stress":
        stress(one, other, "--failure" in argv)
    elif argv[1] == "run":
        run(one, other)
    elif argv[1] == "same":
        same(one, other)
    else:
        print(__doc__)
        return 2
    print(f"check.py {argv[1]}: agree")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
