"""Gives a command its instance's view: ``/opt/ml``, the instances' names, its hostname.

Run as ``python -I -S namespace.py [--opt-ml DIR] [--cache DIR] [--hosts FILE]
[--hostname NAME] [--cwd DIR] -- <command...>`` (standard library only). On Linux it:

1. unshares a mount namespace (and a UTS namespace for ``--hostname``) — with a
   user namespace first when not root (``CLONE_NEWUSER``), mapping uid/gid 0
   inside onto the caller's own, so the command runs as root, as in a
   SageMaker container, while every file it writes belongs to the caller;
2. makes every mount private (nothing propagates back to the machine);
3. bind-mounts the instance's ``opt/ml`` onto ``/opt/ml`` — when the machine
   has no ``/opt/ml``, over a tmpfs on ``/opt`` into which each original
   ``/opt`` entry is bound back (the real ``/opt`` is never written);
4. bind-mounts the warm-pool cache onto ``/opt/ml/sagemaker/warmpoolcache``,
   and the run's hosts file onto ``/etc/hosts`` (so ``algo-<i>`` resolve);
5. sets the hostname (``algo-<i>``), changes to ``cwd`` and execs the command.
   Mounts made before ``exec`` stay; the user namespace's capabilities do not
   reach other namespaces.

``python -I -S namespace.py --probe <scratch dir>`` does all of it with
``<scratch dir>`` as the tree and exits 0, or prints why not and exits 1.
A failing set-up exits :data:`SETUP_FAILED` with the cause on stderr.
"""

from __future__ import annotations

import ctypes
import errno
import os
import signal
import stat
import sys

CLONE_NEWNS = 0x00020000
CLONE_NEWUTS = 0x04000000
CLONE_NEWUSER = 0x10000000
MS_BIND = 0x1000
MS_REC = 0x4000
MS_PRIVATE = 0x40000
PR_SET_PDEATHSIG = 1
OPT = "/opt"
OPT_ML = "/opt/ml"
WARM_POOL_CACHE = "/opt/ml/sagemaker/warmpoolcache"
ETC_HOSTS = "/etc/hosts"
OPTIONS = ("--opt-ml", "--cache", "--hosts", "--hostname", "--cwd")
#: Exit code when the view cannot be set up (as ``docker run`` exits 125 when it fails itself).
SETUP_FAILED = 125
#: What every set-up failure message starts with.
PREFIX = "sagemaker-plans-local: cannot give the job its /opt/ml view: "


class ViewError(Exception):
    """The view cannot be set up; ``str(error)`` names the cause."""


def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


def _call(result: int, what: str) -> None:
    if result != 0:
        code = ctypes.get_errno()
        hint = ""
        if code in (errno.EPERM, errno.EACCES, errno.ENOSPC) and "unshare" in what:
            hint = (
                " (unprivileged user namespaces are disabled or blocked here: "
                "kernel.unprivileged_userns_clone=0, user.max_user_namespaces=0, "
                "kernel.apparmor_restrict_unprivileged_userns=1 or a seccomp filter "
                "such as a container's default profile)"
            )
        raise ViewError(f"{what}: {os.strerror(code)}{hint}")


def _write(path: str, text: str) -> None:
    try:
        with open(path, "w") as handle:
            handle.write(text)
    except OSError as error:
        raise ViewError(f"writing {path}: {error.strerror}") from error


def unshare(flags: int) -> None:
    """New namespaces of ``flags`` (inside a new user namespace unless already root)."""
    libc = _libc()
    if os.geteuid() == 0 and libc.unshare(flags) == 0:
        return
    uid, gid = os.geteuid(), os.getegid()
    _call(libc.unshare(CLONE_NEWUSER | flags), "unshare(CLONE_NEWUSER|%s)" % _names(flags))
    _write("/proc/self/setgroups", "deny")
    _write("/proc/self/uid_map", f"0 {uid} 1")
    _write("/proc/self/gid_map", f"0 {gid} 1")


def _names(flags: int) -> str:
    return "|".join(n for n, f in (("CLONE_NEWNS", CLONE_NEWNS), ("CLONE_NEWUTS", CLONE_NEWUTS)) if flags & f)


def mount(source: str | None, target: str, fstype: str | None, flags: int, data: str | None = None) -> None:
    def encode(s: str | None) -> bytes | None:
        return s.encode() if s is not None else None

    _call(
        _libc().mount(encode(source), target.encode(), encode(fstype), flags, encode(data)),
        f"mount {source or fstype} on {target}",
    )


def _bind(source: str, target: str) -> None:
    mount(source, target, None, MS_BIND | MS_REC)


def _opt_without_ml() -> None:
    """A tmpfs on ``/opt`` holding every original ``/opt`` entry (bound back) and an empty ``ml``."""
    if not os.path.isdir(OPT):
        raise ViewError("this machine has neither /opt/ml nor /opt to mount it in")
    original = os.open(OPT, os.O_RDONLY | os.O_DIRECTORY)
    try:
        names = os.listdir(original)
        mount("tmpfs", OPT, "tmpfs", 0, "mode=755")
        for name in names:
            source, target = f"/proc/self/fd/{original}/{name}", os.path.join(OPT, name)
            mode = os.lstat(name, dir_fd=original).st_mode
            if stat.S_ISLNK(mode):
                os.symlink(os.readlink(name, dir_fd=original), target)
                continue
            if stat.S_ISDIR(mode):
                os.mkdir(target)
            else:
                open(target, "w").close()
            _bind(source, target)
        os.mkdir(OPT_ML)
    finally:
        os.close(original)


def enter(
    opt_ml: str | None, cache: str | None = None, hosts: str | None = None, hostname: str | None = None
) -> None:
    """This process sees ``opt_ml`` at ``/opt/ml`` (``cache`` at the warm-pool cache), ``hosts``
    at ``/etc/hosts``, and has ``hostname`` as its name; each part only when given."""
    if not sys.platform.startswith("linux"):
        raise ViewError(f"mount namespaces need Linux; this is {sys.platform}")
    mounts = bool(opt_ml or hosts)
    flags = (CLONE_NEWNS if mounts else 0) | (CLONE_NEWUTS if hostname else 0)
    if not flags:
        return
    unshare(flags)
    if mounts:
        mount(None, "/", None, MS_REC | MS_PRIVATE)
    if opt_ml:
        if not os.path.isdir(OPT_ML):
            _opt_without_ml()
        _bind(opt_ml, OPT_ML)
        if cache:
            os.makedirs(WARM_POOL_CACHE, exist_ok=True)
            _bind(cache, WARM_POOL_CACHE)
    if hosts:
        if not os.path.isfile(ETC_HOSTS):
            raise ViewError(f"this machine has no {ETC_HOSTS} file to show the instances' names in")
        mount(hosts, ETC_HOSTS, None, MS_BIND)
    if hostname:
        name = hostname.encode()
        _call(_libc().sethostname(name, len(name)), f"sethostname {hostname}")


def probe(scratch: str) -> int:
    """Set a whole view up with ``scratch`` as the tree and check it shows; 0, or 1 with the cause printed."""
    marker = os.path.join(scratch, "probe")
    open(marker, "w").close()
    hosts = os.path.join(scratch, "hosts")
    with open(hosts, "w") as handle:
        handle.write("127.1.0.1 algo-1\n")
    try:
        enter(scratch, None, hosts, "algo-1")
        if not os.path.exists(os.path.join(OPT_ML, "probe")):
            raise ViewError(f"{OPT_ML} does not show the instance's tree after the bind mount")
        if os.uname().nodename != "algo-1":
            raise ViewError("the hostname did not change in the new UTS namespace")
    except (ViewError, OSError) as error:
        print(error)
        return 1
    return 0


def parse(argv: list[str]) -> tuple[dict[str, str], list[str]]:
    """``({option: value}, command)`` from ``[--option value]... -- command...``."""
    options: dict[str, str] = {}
    while argv and argv[0] in OPTIONS and len(argv) > 1:
        options[argv[0]] = argv[1]
        argv = argv[2:]
    if argv[:1] != ["--"] or len(argv) < 2:
        raise SystemExit("usage: namespace.py [%s VALUE]... -- <command...>" % " | ".join(OPTIONS))
    return options, argv[1:]


def main(argv: list[str]) -> int:
    if argv[:1] == ["--probe"]:
        return probe(argv[1])
    options, command = parse(argv)
    parent = os.getppid()
    try:
        enter(
            options.get("--opt-ml"), options.get("--cache"), options.get("--hosts"), options.get("--hostname")
        )
        if "--cwd" in options:
            os.chdir(options["--cwd"])
    except (ViewError, OSError) as error:
        sys.stderr.write(f"{PREFIX}{error}\n")
        return SETUP_FAILED
    if _libc().prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) != 0 or os.getppid() != parent:
        return 128 + signal.SIGKILL  # the supervisor is gone (or cannot be followed)
    try:
        os.execvp(command[0], command)
    except OSError as error:
        sys.stderr.write(f"{command[0]}: {error.strerror}\n")
        return 126 if error.errno == errno.EACCES else 127


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
