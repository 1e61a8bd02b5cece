# memtop.fish -- fish completion for memtop(1).
#
# Why it exists: memtop takes a pid, a sort key, a grouping, files and a
# command to run; completing them saves looking them up.  Installed in
# fish/vendor_completions.d, which fish loads on demand.
#
# Attachable pids come from the segment files memtop-<pid> in
# $MEMTOP_SHM_DIR (default /dev/shm), kept when the process is alive and the
# file readable, described by the process's command name -- the same files
# `memtop --list` reads, without running memtop (which would map and read
# every segment on each TAB).
#
# Keep in sync with src/tui/base/cli_options.c (tests/completions checks it).

# Attachable pids, "pid<TAB>command" a line.
function __memtop_pids
    set -l dir /dev/shm
    set -q MEMTOP_SHM_DIR[1]; and test -n "$MEMTOP_SHM_DIR"; and set dir $MEMTOP_SHM_DIR
    for f in $dir/memtop-*
        set -l pid (string replace -r '.*/memtop-' '' -- $f)
        string match -qr '^[1-9][0-9]*$' -- $pid; or continue
        test -d /proc/$pid -a -r $f; or continue
        set -l comm (cat /proc/$pid/comm 2>/dev/null)
        printf '%s\t%s\n' $pid "$comm"
    end
end

# Where the command line is: prints "cmd" and then the words of PROG ARGS
# typed before the current token (none when PROG itself is being typed),
# "arg" when the current token is an option's value, else "opt".
# memtop parses with "+": PROG starts after `--` or at the first non-option.
function __memtop_state
    set -l words (commandline -opc)
    set -e words[1]
    set -l pending 0
    while set -q words[1]
        set -l w $words[1]
        set -e words[1]
        if test $pending = 1
            set pending 0
            continue
        end
        switch $w
            case --
                printf '%s\n' cmd $words
                return
            case --pid --iterations --delay --sort --top --export --group --output --record --file --at --sample --threshold --serve --serve-min-age
                set pending 1
            case '--*'
            case '-*'
                string match -qr -- '^-[bhlV]*[pndsegf]$' $w; and set pending 1
            case '*'
                printf '%s\n' cmd $w $words
                return
        end
    end
    if test $pending = 1
        echo arg
    else if string match -q -- '-*' (commandline -ct)
        echo opt
    else
        echo cmd
    end
end

function __memtop_no_prog
    test (__memtop_state)[1] != cmd
end

function __memtop_in_prog
    test (__memtop_state)[1] = cmd
end

# PROG's completions: command names, then PROG's own completion.
function __memtop_prog
    set -l words (__memtop_state)
    set -e words[1]
    set -l cur (commandline -ct)
    if not set -q words[1]
        complete -C "$cur"
        return
    end
    complete -C (string join ' ' -- (string escape -- $words) "$cur")
end

# .dat files and directories.
function __memtop_dat_files
    set -l cur (commandline -ct)
    complete -C "__fish_command_without_completions $cur" | string match -r -- '^[^\t]*(?:\.dat|/)(?:\t.*)?$'
end

complete -c memtop -f
complete -c memtop -n __memtop_in_prog -a '(__memtop_prog)'

set -l np -n __memtop_no_prog
complete -c memtop $np -s p -l pid -x -a '(__memtop_pids)' -d 'Attach to a process running with libmemtop.so'
complete -c memtop $np -s b -l batch -d 'Print reports as text every interval'
complete -c memtop $np -s n -l iterations -x -d 'Stop after N reports'
complete -c memtop $np -s d -l delay -x -d 'Seconds between refreshes or reports'
complete -c memtop $np -s s -l sort -x -d 'Sort rows by KEY' -a '
    live\t"live bytes (default)"
    count\t"live blocks"
    allocs\t"allocations per second"
    temporary\t"share of temporary allocations"
    growth\t"growth of live bytes per second"
    leak\t"leak suspicion score"'
complete -c memtop $np -s g -l group -x -d 'One row per trace, function, file or module' -a '
    trace\t"one row per backtrace (default)"
    function\t"one row per function"
    file\t"one row per source file"
    module\t"one row per module"'
complete -c memtop $np -l top -x -d 'Rows per report or export (0 = all)'
complete -c memtop $np -s e -l export -r -F -d 'Write one snapshot (.json, .csv, .folded, .tree.json, .pb.gz, text)'
complete -c memtop $np -l output -r -F -d "Where PROG's stdout and stderr go"
complete -c memtop $np -l record -r -F -d 'Record the allocations to FILE (.dat)'
complete -c memtop $np -l cull -d 'Record culled: blocks freed within SECS (default 10) only counted'
complete -c memtop $np -l thread-order -d "Record each thread's order within a clock tick"
complete -c memtop $np -s f -l file -x -k -a '(__memtop_dat_files)' -d 'Open a recording (.dat)'
complete -c memtop $np -l at -x -d 'With -f: the moment of the recording, in seconds'
complete -c memtop $np -l strict -d 'With --export: exit 3 if the data is not exact'
complete -c memtop $np -l sample -x -a '0 64k 512k 1M' -d 'With PROG: sample about one allocation per BYTES (estimates)'
complete -c memtop $np -l tree -d 'The call tree (text with --batch, else the viewer opens on it)'
complete -c memtop $np -l reverse -d 'The call tree bottom-up: allocation sites, then callers'
complete -c memtop $np -l threshold -x -d 'Fold call tree nodes under BYTES live into (other)'
complete -c memtop $np -l no-symbols -d 'Show frames as module+offset'
complete -c memtop $np -l ascii -d 'Draw with ASCII only'
complete -c memtop $np -l no-color -d 'No colours'
complete -c memtop $np -s l -l list -d 'List processes memtop can attach to'
complete -c memtop $np -l clean -d 'Remove stale segments of processes that are gone'
complete -c memtop $np -l all-users -d 'With --clean, as root: the stale segments of every user'
complete -c memtop $np -l serve -x -d 'Serve /metrics and /pprof/heap over HTTP ([ADDR:]PORT)'
complete -c memtop $np -l serve-min-age -x -d 'With --serve: export only processes that have run SECS seconds'
complete -c memtop $np -s h -l help -d 'Show the help'
complete -c memtop $np -s V -l version -d 'Show the version'
