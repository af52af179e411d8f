#!/bin/sh
# oom_test.sh FAKEGC - the OOM loop by allocation context:
# a 5000-iteration churn (90k allocations; the loop that failed every
# index took 2,530 s on one like it) ends with its contexts stated, loop
# iterations past the 3rd folded; on a small scenario the context loop
# tries fewer points than --every-point and both end clean; --max-points
# caps.
fakegc=$1
. "$(dirname "$0")/scratch.sh"
cat > churn.scn <<'SCN'
m = fake_mode()
repeat 5000
  t = empty(4, 4)
  f = m.fake(t)
  v = t.view(16)
  g = m.fake(v)
  del g
  del f
  del v
  del t
end
expect m.memo_fake == 0
SCN
timeout 60 "$fakegc" oom churn.scn >out 2>&1
rc=$?
cat out
[ "$rc" -eq 0 ] || bad "churn: exit $rc (124: over 60 s)"
grep -q "^ok   churn.scn: 90018 allocations; [0-9]* contexts covered, [0-9]* attempts skipped as duplicates" out ||
    bad "churn: no context summary"
ctx=$(sed -n 's/.* \([0-9]*\) contexts covered.*/\1/p' out | head -1)
[ -n "$ctx" ] && [ "$ctx" -lt 200 ] && [ "$ctx" -gt 10 ] || bad "churn: $ctx contexts (iterations not folded?)"
grep -q "0 findings, 0 crashes$" out || bad "churn: findings"
printf 'm = fake_mode()\nt = empty(2)\nf = m.fake(t)\nrepeat 10\n  u = empty(3)\n  del u\nend\ndel f\nexpect m.memo_fake == 0\n' > small.scn
"$fakegc" oom small.scn > ctx.txt || bad "small: context loop: exit $?"
"$fakegc" oom --every-point small.scn > every.txt || bad "small: --every-point: exit $?"
pc=$(sed -n 's/^oom: 1 scenario, \([0-9]*\) failure points tried.*/\1/p' ctx.txt)
pe=$(sed -n 's/^oom: 1 scenario, \([0-9]*\) failure points tried.*/\1/p' every.txt)
[ -n "$pc" ] && [ -n "$pe" ] && [ "$pc" -lt "$pe" ] || bad "small: $pc points by context, $pe every point"
"$fakegc" oom --max-points 3 churn.scn > cap.txt
grep -q "transient 3 (capped), persistent 3 (capped)" cap.txt || bad "--max-points: $(cat cap.txt)"
"$fakegc" oom --max-points 0 churn.scn >/dev/null 2>&1
[ $? -eq 2 ] || bad "--max-points 0 must be refused (it meant: no limit)"
[ "$fail" -eq 0 ] && echo "ok: $ctx contexts for 90018 allocations; small: $pc points by context, $pe every point"
exit $fail
