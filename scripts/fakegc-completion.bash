# bash completion for fakegc - installed as
# share/bash-completion/completions/fakegc. Everything is asked of the
# fakegc being completed, so it never disagrees with the binary: commands
# from `fakegc --help`, options and their words from `fakegc list options
# CMD` (the option rows themselves), bug, allocator and benchmark names
# from `fakegc list`.
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
    esac
    # the row of the option before the cursor: its kind and words
    local row
    row=$("$fakegc" list options "$cmd" 2>/dev/null | awk -F'\t' -v o="$prev" '$2 == o')
    if [ -n "$row" ]; then
        local kind words
        kind=$(printf '%s' "$row" | cut -f4)
        words=$(printf '%s' "$row" | cut -f6)
        case $kind in
        choice) COMPREPLY=($(compgen -W "${words//|/ }" -- "$cur")); return ;;
        value)   # a comma list of its words (--fail-on lost,acc<TAB>, --order)
            if [ "$words" != - ]; then
                local pre="" last=$cur
                case $cur in *,*) pre=${cur%,*},; last=${cur##*,} ;; esac
                COMPREPLY=($(compgen -P "$pre" -W "${words//|/ }" -- "$last"))
                return
            fi ;;
        input|output) COMPREPLY=($(compgen -f -- "$cur")); return ;;
        folder) COMPREPLY=($(compgen -d -- "$cur")); return ;;
        esac
    fi
    if [ "$cmd" = help ]; then
        COMPREPLY=($(compgen -W "$(_fakegc_words "$fakegc" commands)" -- "$cur"))
        return
    fi
    if [ "$cmd" = list ]; then
        COMPREPLY=($(compgen -W "bugs designs allocators benches words options" -- "$cur"))
        return
    fi
    if [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W "$("$fakegc" list options "$cmd" 2>/dev/null |
                                   awk -F'\t' '{print $2; if ($3 != "-") print $3}')" -- "$cur"))
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
