# memtop.bash -- bash completion for memtop(1).
#
# Why it exists: memtop takes a pid, a sort key, a grouping, files and a
# command to run; completing them saves looking them up.  Installed as
# bash-completion/completions/memtop, so bash-completion loads it on demand.
# It also works on its own (source it): bash-completion's helpers (_filedir,
# _command_offset) are used when they are loaded, plain compgen otherwise.
#
# Attachable pids come from the segment files memtop-<pid> in
# ${MEMTOP_SHM_DIR:-/dev/shm}, kept when the process is alive and the file
# readable -- the same files `memtop --list` reads, without running memtop
# (which would map and read every segment on each TAB).
#
# Keep in sync with src/tui/base/cli_options.c (tests/completions checks it).

# Attachable pids, one a line.
_memtop_pids()
{
    local dir=${MEMTOP_SHM_DIR:-/dev/shm} f pid
    for f in "$dir"/memtop-[1-9]*; do
        pid=${f##*/memtop-}
        [[ $pid =~ ^[1-9][0-9]*$ && -d /proc/$pid && -r $f ]] || continue
        printf '%s\n' "$pid"
    done
}

# Does the option word $1 take the next word as its argument?
_memtop_takes_arg()
{
    case $1 in
    --pid | --iterations | --delay | --sort | --top | --export | --group | \
        --output | --record | --file | --at | --sample | --threshold | --serve | \
        --serve-min-age)
        return 0 ;;
    --*) return 1 ;;
    -*)
        # A cluster of short options (-bp): the last letter decides.
        [[ $1 =~ ^-[bhlV]*[pndsegf]$ ]] ;;
    *) return 1 ;;
    esac
}

# Index in COMP_WORDS where PROG starts (after `--` or at the first
# non-option, as memtop parses with "+"), or nothing before COMP_CWORD.
_memtop_prog_index()
{
    local i w
    for ((i = 1; i < COMP_CWORD; i++)); do
        w=${COMP_WORDS[i]}
        if [[ $w == -- ]]; then
            echo $((i + 1))
            return
        fi
        if [[ ${COMP_WORDS[i + 1]} == = && $w == --* ]]; then
            ((i += 2)) # --opt = value, split at COMP_WORDBREAKS' '='
        elif _memtop_takes_arg "$w"; then
            ((i++))
        elif [[ $w != -* ]]; then
            echo "$i"
            return
        fi
    done
    [[ ${COMP_WORDS[COMP_CWORD]} != -* ]] && ! _memtop_takes_arg "${COMP_WORDS[COMP_CWORD - 1]}" &&
        [[ ${COMP_WORDS[COMP_CWORD - 1]} != = ]] && echo "$COMP_CWORD"
}

# File names matching $1, directories too; $2 is an extension filter or empty.
_memtop_files()
{
    local cur=$1 ext=$2
    compopt -o filenames 2>/dev/null
    if declare -F _filedir >/dev/null; then
        _filedir "$ext"
        return
    fi
    if [[ -n $ext ]]; then
        mapfile -t COMPREPLY < <(compgen -d -- "$cur"; compgen -f -X "!*.$ext" -- "$cur")
    else
        mapfile -t COMPREPLY < <(compgen -f -- "$cur")
    fi
}

# The value of option $1 (long or short), with $2 typed so far.
_memtop_value()
{
    local opt=$1 cur=$2 IFS=$' \t\n'
    case $opt in
    -p | --pid) mapfile -t COMPREPLY < <(compgen -W "$(_memtop_pids)" -- "$cur") ;;
    -s | --sort)
        mapfile -t COMPREPLY < <(compgen -W "live count allocs temporary growth leak" -- "$cur") ;;
    -g | --group) mapfile -t COMPREPLY < <(compgen -W "trace function file module" -- "$cur") ;;
    -e | --export | --output | --record) _memtop_files "$cur" "" ;;
    -f | --file) _memtop_files "$cur" dat ;;
    --sample) mapfile -t COMPREPLY < <(compgen -W "0 64k 512k 1M" -- "$cur") ;;
    *) COMPREPLY=() ;; # -n, -d, --top, --at, --threshold, --serve-min-age: a number; --serve: [ADDR:]PORT
    esac
}

_memtop()
{
    local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD - 1]}
    local opts="-p --pid -b --batch -n --iterations -d --delay -s --sort --top
        -e --export -g --group -f --file --output --record --cull --thread-order --at --strict --sample --tree
        --reverse --threshold --no-symbols --ascii
        --no-color -l --list --clean --all-users --serve --serve-min-age -h --help -V --version --"
    COMPREPLY=()

    local start
    start=$(_memtop_prog_index)
    if [[ -n $start ]]; then
        if declare -F _command_offset >/dev/null; then
            _command_offset "$start"
        elif ((start == COMP_CWORD)); then
            mapfile -t COMPREPLY < <(compgen -c -- "$cur" | sort -u)
        else
            _memtop_files "$cur" ""
        fi
        return 0
    fi

    # --opt=value: three words when '=' is in COMP_WORDBREAKS (the default),
    # else one, which the completions then replace whole.
    if [[ $cur == --*=* ]]; then
        _memtop_value "${cur%%=*}" "${cur#*=}"
        local i
        for i in "${!COMPREPLY[@]}"; do
            COMPREPLY[i]=${cur%%=*}=${COMPREPLY[i]}
        done
        return 0
    fi
    if [[ $cur == = && $prev == --* ]]; then
        _memtop_value "$prev" ""
        return 0
    fi
    if [[ $prev == = && ${COMP_WORDS[COMP_CWORD - 2]} == --* ]]; then
        _memtop_value "${COMP_WORDS[COMP_CWORD - 2]}" "$cur"
        return 0
    fi
    if _memtop_takes_arg "$prev"; then
        [[ $prev == --* ]] || prev=-${prev: -1}
        _memtop_value "$prev" "$cur"
        return 0
    fi
    if [[ $cur == -* ]]; then
        local IFS=$' \t\n'
        mapfile -t COMPREPLY < <(compgen -W "$opts" -- "$cur")
    fi
    return 0
}

complete -F _memtop memtop
