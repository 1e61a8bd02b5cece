"""seclib.py -- plumbing of memtop's hostile-local-user tests (python3, stdlib only).

Why it exists: docs/security.md promises what another local account cannot do
to memtop or to a process it watches.  Each promise is checked by a script in
this folder that plays the attacker for real: it creates throwaway accounts
with useradd (CI runs as root), runs the attacker's and the victim's commands
under those accounts, and removes the accounts afterwards, also when the test
fails.  The shared directories the attacks happen in are sticky and
world-writable, like /dev/shm and /tmp.
"""

import atexit
import contextlib
import os
import pwd
import re
import shutil
import stat
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e"))
import e2elib  # noqa: E402  (the shared e2e plumbing)
from e2elib import check, fail  # noqa: E402,F401


class User:
    """A throwaway account: its name, uid and gid, and a private home directory."""

    def __init__(self, name, home):
        pw = pwd.getpwnam(name)
        self.name, self.uid, self.gid, self.home = name, pw.pw_uid, pw.pw_gid, home

    def popen_kwargs(self):
        """What subprocess needs to run a command as this user."""
        return {"user": self.uid, "group": self.gid, "extra_groups": [], "cwd": self.home}


def require_root():
    if os.geteuid() != 0:
        fail("these tests play two local users and must run as root (CI does)")


def remove_orphans():
    """Removes the accounts of earlier runs that died before their cleanup
    (a test killed on its timeout): mtsec<pid><letter> whose pid is gone."""
    for pw in pwd.getpwall():
        m = re.fullmatch(r"mtsec(\d+)[a-z]", pw.pw_name)
        if not m or os.path.exists("/proc/%s" % m.group(1)):
            continue
        subprocess.run(["pkill", "-KILL", "-u", str(pw.pw_uid)], stdin=subprocess.DEVNULL,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        subprocess.run(["userdel", pw.pw_name], stdin=subprocess.DEVNULL,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


@contextlib.contextmanager
def throwaway_users(ctx, count):
    """Creates `count` accounts for the length of the block, then removes them.

    The names carry this process's pid, so tests running side by side never
    share an account.  Each gets a home under the test's work directory.
    """
    require_root()
    remove_orphans()
    os.chmod(ctx.workdir, 0o755)
    users = []
    try:
        for i in range(count):
            name = "mtsec%d%c" % (os.getpid(), ord("a") + i)
            home = ctx.path("home-" + name)
            subprocess.run(["useradd", "-M", "-N", "-s", "/usr/sbin/nologin", "-d", home, name],
                           check=True, stdin=subprocess.DEVNULL)
            os.makedirs(home, exist_ok=True)
            user = User(name, home)
            os.chown(home, user.uid, user.gid)
            os.chmod(home, 0o700)
            users.append(user)
        yield users
    finally:
        for user in users:
            subprocess.run(["pkill", "-KILL", "-u", str(user.uid)], stdin=subprocess.DEVNULL,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            subprocess.run(["userdel", user.name], stdin=subprocess.DEVNULL,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def shared_dir(ctx, name):
    """A sticky, world-writable directory like /dev/shm or /tmp."""
    path = ctx.path(name)
    os.makedirs(path, exist_ok=True)
    os.chmod(path, 0o1777)
    return path


def run_as(user, cmd, env, timeout=e2elib.RUN_TIMEOUT_S, **kwargs):
    """Runs cmd as user (None: as root) to completion; returns CompletedProcess."""
    extra = user.popen_kwargs() if user else {}
    extra.update(kwargs)
    try:
        return subprocess.run(cmd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, timeout=timeout, **extra)
    except subprocess.TimeoutExpired as e:
        fail("timed out after %ds (a hang is a finding): %s\nstdout:\n%s\nstderr:\n%s" %
             (timeout, e2elib.show_cmd(cmd), e.stdout, e.stderr))


def start_as(user, cmd, env, **kwargs):
    """Starts cmd as user (None: as root) in the background; kwargs: more
    of Popen's (stdout=subprocess.PIPE, say)."""
    opts = dict(stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                text=True)
    opts.update(user.popen_kwargs() if user else {})
    opts.update(kwargs)
    return subprocess.Popen(cmd, env=env, **opts)


def start_demo(ctx, args, user, shm, **extra):
    """Starts memtop-demo (300 s) as user (None: root), preloaded, publishing
    into shm; extra: more environment."""
    env = ctx.env_with(MEMTOP_SHM_DIR=shm, LD_PRELOAD=args.preload, **extra)
    return start_as(user, [args.demo, "300"], env)


@contextlib.contextmanager
def sysctl(path, value):
    """Sets a /proc/sys value for the block and restores it after."""
    with open(path) as f:
        old = f.read().strip()
    with open(path, "w") as f:
        f.write(str(value))
    try:
        yield
    finally:
        with open(path, "w") as f:
            f.write(old)


SKIP = 77  # ctest's SKIP_RETURN_CODE for these tests (tests/security/CMakeLists.txt)
STAGED = ("memtop", "preload", "demo", "exact", "make_segment", "map_wait")


def reachable(path):
    """Whether any user can reach path: every directory on the way o+x."""
    path = os.path.realpath(path)
    while not os.path.exists(path):  # not made yet: its first existing parent
        path = os.path.dirname(path)
    while True:
        parent = os.path.dirname(path)
        if not os.stat(parent).st_mode & stat.S_IXOTH:
            return False
        if parent == path:
            return True
        path = parent


def stage(args):
    """Makes the programs under test and the work directory reachable by
    the throwaway users.  A build tree below a private directory (a CI
    clone in a 0700 folder) is copied, its layout kept (memtop finds
    libmemtop.so beside itself), into a fresh 0755 directory under /tmp.
    Where not even that is reachable (a chroot whose root is 0700) the test
    cannot play two users: it says so and is skipped."""
    files = {a: getattr(args, a) for a in STAGED if getattr(args, a, None)}
    if all(reachable(p) for p in files.values()) and reachable(args.workdir):
        return args
    top = tempfile.mkdtemp(prefix="memtop-sec-", dir="/tmp")
    atexit.register(shutil.rmtree, top, True)
    os.chmod(top, 0o755)
    if not reachable(os.path.join(top, "x")):
        print("SKIP %s: other users cannot reach /tmp here (is / private?): these tests "
              "need two local users" % os.path.basename(sys.argv[0]), flush=True)
        sys.exit(SKIP)
    common = os.path.commonpath([os.path.dirname(p) for p in files.values()])
    for attr, src in files.items():
        dst = os.path.join(top, "files", os.path.relpath(src, common))
        os.makedirs(os.path.dirname(dst), mode=0o755, exist_ok=True)
        shutil.copy2(src, dst)
        os.chmod(dst, 0o755)
        setattr(args, attr, dst)
    for root, dirs, _ in os.walk(os.path.join(top, "files")):
        for d in dirs:
            os.chmod(os.path.join(root, d), 0o755)
    args.workdir = os.path.join(top, "work")
    return args


def main(test_fn, description, **extra):
    """e2elib.main, with the programs staged where the throwaway users can
    reach them; extra: more attributes of args (paths are staged too)."""
    def run(args):
        for key, value in extra.items():
            setattr(args, key, value)
        test_fn(stage(args))

    e2elib.main(run, description)


parse_args = e2elib.parse_args
Ctx = e2elib.Ctx
