#!/usr/bin/zsh -f
# zsh_complete.zsh -- what zsh really completes for a command line.
#
# Why it exists: zsh completion functions only run inside ZLE, so the test
# drives an interactive `zsh -f -i` in a pseudo-terminal (zsh/zpty), loads
# compinit with FPATH_DIR first in $fpath, types LINE and a TAB, and records
# every match the completion system adds (a compadd wrapper) into OUT_FILE,
# one "match<TAB>description" a line, then "#done".
#
# usage: zsh_complete.zsh FPATH_DIR OUT_FILE LINE
# Exit: 0 when the completion ran to its end, 1 when it did not (10 s).
zmodload zsh/zpty || exit 2
fdir=$1 out=$2 line=$3
: >$out

zpty mt zsh -f -i || exit 2
zpty -w mt "PROMPT= RPROMPT=; unsetopt zle_bracketed_paste 2>/dev/null"
zpty -w mt "fpath=(${(q)fdir} \$fpath); autoload -Uz compinit; compinit -u -D"
zpty -w mt "zstyle ':completion:*' insert-tab false; zstyle ':completion:*' list-grouped false; _mt_out=${(q)out}"
zpty -w mt '_mt_done() { print -r -- "#done" >>$_mt_out; }; comppostfuncs=(_mt_done)'
# compadd records what it adds; calls that only collect (-O/-A/-D) pass through.
zpty -w mt 'compadd() {
  if [[ ${@[1,(i)(-|--)]} == *-(O|A|D)\ * ]]; then builtin compadd "$@"; return; fi
  local -a __hits __dscr; local __i __rc
  if (( ${@[(I)-d]} )); then
    local __d=${@[$(( ${@[(i)-d]} + 1 ))]}
    if [[ $__d == \(* ]]; then eval "__dscr=$__d"; else __dscr=("${(@P)__d}"); fi
  fi
  builtin compadd -A __hits -D __dscr "$@"; __rc=$?
  for (( __i = 1; __i <= $#__hits; __i++ )); do
    print -r -- "$__hits[__i]"$'\''\t'\''"${__dscr[__i]}" >>$_mt_out
  done
  builtin compadd "$@"; return __rc
}'
zpty -w mt 'bindkey "^I" complete-word'
zpty -n -w mt "$line"$'\t'

# Drain the terminal until the completion has finished (or 10 s passed).
integer i
for (( i = 0; i < 200; i++ )); do
  while zpty -r -t mt _junk 2>/dev/null; do :; done
  grep -q '^#done$' $out 2>/dev/null && break
  sleep 0.05
done
zpty -d mt
grep -q '^#done$' $out
