#!/usr/bin/env python3
"""sec_clean_all.py -- root's `memtop --clean --all-users` removes every user's leftovers, safely.

Why it exists: `--clean` removes only its caller's own files, also as root
(security_squat), so a service running as its own user that keeps crashing
piled up dead segments that root could not clean with memtop.  Here a
throwaway user S (the service) leaves, in a sticky directory: the segment of
a killed process (dead), another whose file a live process of S still maps
(mapped), the segment of a running process (live), a symlink named like a
segment pointing at a file of root's (link), and a temporary `.memtop-*`
file; beside them lies a junk segment of a uid that has no name.  As S,
`--clean --all-users` is refused in one line and removes nothing; root's
plain `--clean` keeps all of these; root's `--clean --all-users` removes the
dead one, the link (only the link: its target is untouched) and the junk,
names S (or the bare uid) on each line, and keeps the mapped, the live and
the temporary file; once the mapping process is gone, the mapped one goes.
"""

import os
import pwd
import signal
import subprocess
import sys

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import seclib  # noqa: E402
from seclib import check  # noqa: E402

# CAP_DAC_OVERRIDE, CAP_FOWNER, CAP_SYS_PTRACE: what --all-users needs.
NEEDED_CAPS = {1: "CAP_DAC_OVERRIDE", 3: "CAP_FOWNER", 19: "CAP_SYS_PTRACE"}


def skip_without_caps():
    """Root without the capabilities --all-users needs (a container's
    default drops CAP_SYS_PTRACE) is refused by design: nothing to test."""
    with open("/proc/self/status") as f:
        eff = int(next(ln for ln in f if ln.startswith("CapEff:")).split()[1], 16)
    missing = [name for bit, name in NEEDED_CAPS.items() if not eff >> bit & 1]
    if missing:
        print("SKIP sec_clean_all.py: root here lacks %s, which --clean --all-users needs"
              % ", ".join(missing), flush=True)
        sys.exit(seclib.SKIP)


def leave_dead_segment(ctx, args, user, shm):
    """A segment of user's whose process was killed: its path."""
    proc = seclib.start_demo(ctx, args, user, shm)
    seg = os.path.join(shm, "memtop-%d" % proc.pid)
    seclib.e2elib.wait_for(lambda: proc.poll() is None and os.path.exists(seg),
                           "the segment of %s's memtop-demo %d" % (user.name, proc.pid))
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=30)
    return seg


def unnamed_uid():
    """A uid no user name stands for (a user deleted since)."""
    return next(u for u in range(54321, 60000) if not any(p.pw_uid == u for p in pwd.getpwall()))


def snapshot(shm):
    """Every entry of shm: name -> (is a link, owner)."""
    out = {}
    for name in os.listdir(shm):
        st = os.lstat(os.path.join(shm, name))
        out[name] = (os.path.islink(os.path.join(shm, name)), st.st_uid)
    return out


def clean(user, args, env, *extra):
    return seclib.run_as(user, [args.memtop, "--clean"] + list(extra), env)


def test(args):
    ctx = seclib.Ctx(args)
    seclib.require_root()
    skip_without_caps()
    with seclib.throwaway_users(ctx, 1) as (svc,):
        shm = seclib.shared_dir(ctx, "shm")
        env = ctx.env_with(MEMTOP_SHM_DIR=shm)
        procs = []
        try:
            dead = leave_dead_segment(ctx, args, svc, shm)
            mapped = leave_dead_segment(ctx, args, svc, shm)
            holder = seclib.start_as(svc, [args.map_wait, mapped], env,
                                     stdout=subprocess.PIPE)
            procs.append(holder)
            check(holder.stdout.readline().strip() == "mapped",
                  "the process of %s that maps %s did not start" % (svc.name, mapped))
            live_proc = seclib.start_demo(ctx, args, svc, shm)
            procs.append(live_proc)
            live = os.path.join(shm, "memtop-%d" % live_proc.pid)
            seclib.e2elib.wait_for(lambda: os.path.exists(live), "the live segment " + live)

            gone = seclib.start_as(svc, ["true"], env)  # a pid nobody has any more
            gone.communicate(timeout=30)
            precious = ctx.path("precious")
            with open(precious, "w") as f:
                f.write("root's file\n")
            os.chmod(precious, 0o644)
            link = os.path.join(shm, "memtop-%d-abc" % gone.pid)
            temp = os.path.join(shm, ".memtop-%d.0123456789abcdef" % gone.pid)
            p = seclib.run_as(svc, ["sh", "-c", 'ln -s "$0" "$1" && printf x > "$2"', precious,
                                    link, temp], env)
            check(p.returncode == 0, "planting the link and temporary file failed: " + p.stderr)
            check(all(uid == svc.uid for _, uid in snapshot(shm).values())
                  and len(snapshot(shm)) == 5,
                  "expected 5 files of %s in %s: %s" % (svc.name, shm, snapshot(shm)))
            nameless = os.path.join(shm, "memtop-%d-def" % gone.pid)  # junk of a deleted user
            with open(nameless, "w") as f:
                f.write("junk")
            os.chown(nameless, unnamed_uid(), unnamed_uid())
            all_files = snapshot(shm)

            p = clean(svc, args, env, "--all-users")
            lines = p.stderr.strip().splitlines()
            check(p.returncode != 0 and len(lines) == 1 and "--all-users is for root" in lines[0]
                  and not p.stdout and snapshot(shm) == all_files,
                  "%s's --clean --all-users should fail in one line and remove nothing (%s):\n%s"
                  % (svc.name, sorted(snapshot(shm)), seclib.e2elib.describe(p)))
            print("ok: as %s: %s (exit %d)" % (svc.name, lines[0], p.returncode))

            p = clean(None, args, env)
            check(p.returncode == 0 and snapshot(shm) == all_files,
                  "root's plain --clean touched %s's files (%s):\n%s"
                  % (svc.name, sorted(snapshot(shm)), seclib.e2elib.describe(p)))
            print("ok: root's --clean keeps every file of %s's" % svc.name)

            p = clean(None, args, env, "--all-users")
            now = snapshot(shm)
            want = {n: v for n, v in all_files.items()
                    if n not in (os.path.basename(dead), os.path.basename(link),
                                 os.path.basename(nameless))}
            check(p.returncode == 0 and now == want,
                  "root's --clean --all-users should remove only the dead segment, the link "
                  "and the nameless uid's junk "
                  "(left %s, wanted %s):\n%s" % (sorted(now), sorted(want),
                                                 seclib.e2elib.describe(p)))
            with open(precious) as f:
                check(f.read() == "root's file\n" and not os.path.islink(precious),
                      "the link's target %s was changed" % precious)
            whose = " of user %s " % svc.name
            for path, what in ((dead, "removed"), (link, "removed"), (mapped, "kept")):
                check(any(ln.startswith(what + " " + path + whose) for ln in
                          p.stdout.splitlines()),
                      "no line %r in root's --clean --all-users:\n%s"
                      % (what + " " + path + whose, seclib.e2elib.describe(p)))
            check("removed %s of uid %d (" % (nameless, unnamed_uid()) in p.stdout,
                  "root's --clean --all-users does not name uid %d:\n%s"
                  % (unnamed_uid(), seclib.e2elib.describe(p)))
            check("but process %d maps it" % holder.pid in p.stdout,
                  "root's --clean --all-users does not say who maps %s:\n%s"
                  % (mapped, seclib.e2elib.describe(p)))
            print("ok: root's --clean --all-users:\n  " + p.stdout.strip().replace("\n", "\n  "))

            holder.kill()
            holder.wait()
            p = clean(None, args, env, "--all-users")
            left = sorted(snapshot(shm))
            check(p.returncode == 0 and left == sorted([os.path.basename(live),
                                                        os.path.basename(temp)]),
                  "once unmapped, %s should go, the live segment and %s stay (left %s):\n%s"
                  % (mapped, temp, left, seclib.e2elib.describe(p)))
            print("ok: unmapped, it goes: %s" % p.stdout.strip())
        finally:
            for proc in procs:
                if proc.poll() is None:
                    proc.kill()
                    proc.wait()


if __name__ == "__main__":
    seclib.main(test, __doc__.splitlines()[1])
