#!/usr/bin/python3
"""validate.py SCHEMA.json REPORT.json... [--invalid]

Validate fakegc JSON reports with Debian's python3-jsonschema (Draft 2020-12).
Exit 0 when every report is valid (with --invalid: when every report is
rejected), 1 otherwise, printing each error with its JSON path."""
import json
import sys

import jsonschema


def main(argv):
    want_invalid = "--invalid" in argv
    args = [a for a in argv if a != "--invalid"]
    if len(args) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    with open(args[0]) as f:
        schema = json.load(f)
    jsonschema.Draft202012Validator.check_schema(schema)
    v = jsonschema.Draft202012Validator(schema)
    bad = 0
    for path in args[1:]:
        try:
            with open(path) as f:
                doc = json.load(f)
        except (OSError, ValueError) as e:
            errors = [f"not JSON: {e}"]
        else:
            errors = [f"{'/'.join(map(str, e.absolute_path)) or '(top)'}: {e.message}"
                      for e in v.iter_errors(doc)]
        if want_invalid:
            if errors:
                print(f"ok (rejected) {path}: {errors[0][:200]}")
            else:
                print(f"FAIL {path}: accepted by {args[0]}, expected a rejection")
                bad += 1
        elif errors:
            bad += 1
            for e in errors[:10]:
                print(f"FAIL {path}: {e[:300]}")
        else:
            print(f"ok {path} ({doc.get('schema')})")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
