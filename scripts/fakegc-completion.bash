# bash completion for fakegc - installed as
# share/bash-completion/completions/fakegc. Everything is asked of the
# fakegc being completed, so it never disagrees with the binary: commands
# from `fakegc --help`, options from `fakegc CMD --help`, bug, allocator
# and benchmark names from `fakegc list`.
_fakegc_words() {
    # the first word of every indented line after "$2:" in "$1 --help"
    "$1" $3 --help 2>/dev/null | awk -v sect="$2:" '
        $0 == sect { on = 1; next }
        on && /^  [a-z]/ { print $1; next }
        on && /^$/ { on = 0 }'
}

_fakegc() {
    local cur prev cmd fakegc=${COMP_WORDS[0]}
    cur=${COMP_WORDS[COMP_CWORD]}
    prev=${COMP_WORDS[COMP_CWORD-1]}
    cmd=${COMP_WORDS[1]:-}
    if [ "$COMP_CWORD" -eq 1 ]; then
        COMPREPLY=($(compgen -W "$(_fakegc_words "$fakegc" commands) help --help --version" \
                     -- "$cur"))
        return
    fi
    case $prev in
    --inject)
        local pre="" last=$cur
        case $cur in *,*) pre=${cur%,*},; last=${cur##*,} ;; esac
        COMPREPLY=($(compgen -P "$pre" -W "$("$fakegc" list bugs 2>/dev/null | awk '{print $1}')" \
                     -- "$last"))
        return ;;
    --allocator)
        COMPREPLY=($(compgen -W "$("$fakegc" list allocators 2>/dev/null | awk '{print $1}')" \
                     -- "$cur"))
        return ;;
    --format)
        local fmts
        fmts=$("$fakegc" "$cmd" --help 2>/dev/null | sed -n '/--format FMT/{N;s/.*--format FMT//;p;}' |
               tr -c 'a-z\n' ' ' | tr ' ' '\n' |
               grep -xE 'text|json|junit|tap|markdown' | sort -u)
        COMPREPLY=($(compgen -W "$fmts" -- "$cur"))
        return ;;
    --gc) COMPREPLY=($(compgen -W "manual auto stress" -- "$cur")); return ;;
    --sweep) COMPREPLY=($(compgen -W "eager periodic" -- "$cur")); return ;;
    --compat) COMPREPLY=($(compgen -W "pytorch-1.13" -- "$cur")); return ;;
    --output|--dot|--objects|--timeline|--junit|--tap|--json|--text|--baseline|--out-dir)
        COMPREPLY=($(compgen -f -- "$cur"))
        return ;;
    esac
    if [ "$cmd" = help ]; then
        COMPREPLY=($(compgen -W "$(_fakegc_words "$fakegc" commands)" -- "$cur"))
        return
    fi
    if [ "$cmd" = list ]; then
        COMPREPLY=($(compgen -W "bugs allocators benches" -- "$cur"))
        return
    fi
    if [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W "$("$fakegc" "$cmd" --help 2>/dev/null |
                                   grep -oE '(^|[ ,[])--?[a-zA-Z][a-zA-Z0-9-]*' |
                                   sed 's/^[ ,[]//' | sort -u)" -- "$cur"))
        return
    fi
    if [ "$cmd" = bench ]; then
        COMPREPLY=($(compgen -W "$("$fakegc" list benches 2>/dev/null | awk '{print $1}')" \
                     -- "$cur"))
        return
    fi
    COMPREPLY=($(compgen -f -X '!*@(.scn|.json)' -- "$cur") $(compgen -d -- "$cur"))
}
complete -F _fakegc fakegc
