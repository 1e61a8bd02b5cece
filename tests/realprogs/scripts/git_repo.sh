#!/bin/sh
# Real-program workload for git under libmemtop.so: init a repo in $1
# (recreated), add and commit files with a fixed identity and date, then
# show the log, a diff and the status.  Output is deterministic.
set -e
dir=$1
rm -rf "$dir"
mkdir -p "$dir"
cd "$dir"
export HOME="$dir" GIT_CONFIG_NOSYSTEM=1 GIT_AUTHOR_NAME=Tester GIT_AUTHOR_EMAIL=t@example.org
export GIT_COMMITTER_NAME=Tester GIT_COMMITTER_EMAIL=t@example.org
export GIT_AUTHOR_DATE="2020-01-01T00:00:00Z" GIT_COMMITTER_DATE="2020-01-01T00:00:00Z"
git -c init.defaultBranch=main init -q .
for i in 1 2 3 4 5; do
    seq 1 $((i * 2000)) > "file$i.txt"
done
git add .
git commit -q -m "first commit"
seq 1 3000 | sed 's/$/ changed/' > file2.txt
echo new > new.txt
git add -A
git commit -q -m "second commit"
git log --stat --format='%H %an %ad %s' --date=iso-strict
git diff HEAD~1 --stat
git rev-parse HEAD
git status --short
git gc -q
git count-objects -v | grep -v size
