#!/usr/bin/env bash
# textmatch.sh [ROOT] - facts are not read back out of text: every strncmp
# and strstr in ROOT/src is one of the matches listed below (option and
# argument parsing, device and allocator names, file names, the shrinker
# editing scenario source, the text writer's own wording). A failure's kind,
# an expectation's query, a verdict, a holder, a description or a path is a
# field of the record (rp_failure.cause and .query, st_class_kind,
# rp_vgroup, hp_path_walk): a new strncmp/strstr fails here until it is
# either made a field or, when it really is one of the above, listed with
# why. Exit 0, or 1 with each unlisted match.
set -u
root=$(cd "${1:-$(dirname "$0")/../..}" && pwd)
# FILE|TEXT OF THE LINE (a fixed substring)|why
allowed='
src/bench/bn_report.c|strncmp(line, "model name", 10)|/proc/cpuinfo, read for the host
src/bench/bn_session.c|strncmp(names[i], name, len)|a bench name abbreviated on the command line
src/cli/cli_common.c|strstr(c->allocator, "guard")|an allocator chain given as an option
src/cli/cli_run.c|strstr(c->allocator, "guard")|an allocator chain given as an option
src/cli/cli_run.c|strstr(c->inject, "early-free")|a bug list given as an option
src/cli/main.c|strncmp(longs[i], cmd, strlen(cmd))|a command abbreviated on the command line
src/heap/hp_dotg.c|strncmp(d->n[i].via, via, len)|a DOT node is keyed by a path prefix: equal keys
src/heap/hp_dotg.c|strncmp(e, "...", 3)|one path element, walked: the elision hp_path_shape writes
src/heap/hp_path.c|strncmp(lab, OBJ_ATTR_LABEL, OBJ_ATTR_LABEL_LEN)|an edge label being made into a path element
src/heap/hp_path.c|strstr(it->next_, HP_PATH_SEP)|hp_path_next: the one reader of the path separator
src/opt/op.c|strncmp(rows[i]->name, a, k)|option parsing
src/opt/op.c|strncmp(a, r->name, strlen(r->name))|option parsing
src/opt/op.c|strncmp(err, "unknown value", 13)|option parsing: a value parser'"'"'s message
src/opt/op.c|strncmp(err, "expected", 8)|option parsing: a value parser'"'"'s message
src/report/rp.c|strncmp(run->interrupted, "SIG", 3)|the text writer
src/report/rp.c|strstr(text, msg)|the text writer: a message its statement already quotes
src/report/rp_find.c|strncmp(file, run->program, dir)|a file name under the program'"'"'s folder
src/report/rp_timeline.c|strncmp(t->pfiles[k], file, RP_TL_PFILE_LEN - 1)|a file name table
src/scenario/sc_files.c|strstr(path, pattern)|a file name against a --filter pattern
src/scenario/sc_parse.c|strstr(p->lx.msg, "not a text file")|the lexer'"'"'s own message
src/scenario/sc_parse.c|strncmp(s, "cuda:", 5)|a device name
src/tensor/ts_dtype.c|strncmp(s, "cuda:", 5)|a device name
src/stress/st_gen.c|strncmp(fmt, "end", 3)|the generator writing scenario source
src/stress/st_run.c|strncmp(q, "end", 3)|counting statements in scenario source
src/stress/st_shrink.c|strncmp(p, w, n)|the shrinker editing scenario source
src/stress/st_shrink.c|strncmp(w, "at(", 3)|the shrinker editing scenario source
src/stress/st_shrink.c|strstr(l, "raises(")|the shrinker editing scenario source
src/stress/st_shrink.c|strstr(l, ".meta(")|the shrinker editing scenario source
src/value/vl.c|strncmp(p, v, l)|a value list given as an option
src/value/vl.c|strncmp(a, *list, n)|a value list given as an option
'
cd "$root" || exit 2
fail=0
while IFS= read -r hit; do
    file=${hit%%:*}
    rest=${hit#*:}
    line=${rest#*:}
    ok=0
    while IFS='|' read -r afile atext _; do
        [ -n "$afile" ] || continue
        if [ "$afile" = "$file" ] && [[ "$line" == *"$atext"* ]]; then
            ok=1
            break
        fi
    done <<< "$allowed"
    if [ "$ok" = 0 ]; then
        echo "$file:${rest%%:*}: text matched outside the list (a fact read back out of words?):"
        echo "    ${line#"${line%%[![:space:]]*}"}"
        fail=1
    fi
done < <(grep -rnE --include='*.c' --include='*.h' '\b(strncmp|strstr)\(' src)
if [ "$fail" != 0 ]; then
    echo "textmatch: make it a field of the record, or (option parsing, device or file"
    echo "names, scenario source, the text writer's own words) list it in $0 with why"
fi
exit $fail
