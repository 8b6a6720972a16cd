"""Gives a command its instance's view: ``/opt/ml``, the instances' names, its hostname.

Run as ``python -I -S namespace.py [--opt-ml DIR] [--cache DIR] [--hosts FILE]
[--hostname NAME] [--tmp DIR [--nested yes]] [--environment FILE] [--sshd FILE] [--cwd DIR] -- <command...>``
(standard library only). On Linux it:

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
4b. (a container's instance) bind-mounts its own directory onto ``/tmp`` (every
   original ``/tmp`` entry bound back into it, so paths under ``/tmp`` still
   resolve), its own file onto ``/etc/environment`` and its ``sshd`` stand-in
   onto ``/usr/sbin/sshd`` (over a tmpfs holding ``/usr/sbin``'s entries when
   the machine has none);
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
import re
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
TMP = "/tmp"
ETC_ENVIRONMENT = "/etc/environment"
SSHD = "/usr/sbin/sshd"
OPTIONS = (
    "--opt-ml",
    "--cache",
    "--hosts",
    "--hostname",
    "--tmp",
    "--environment",
    "--sshd",
    "--nested",
    "--cwd",
)
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


def mount_points(path: str) -> set[str]:
    """Names of the entries of ``path`` that are mount points (``/proc/self/mountinfo``)."""
    with open("/proc/self/mountinfo") as info:
        points = [line.split()[4] for line in info]
    decoded = [re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), p) for p in points]
    return {os.path.basename(p) for p in decoded if os.path.dirname(p) == path}


def _placeholders(directory: int, into: str, only: set[str] | None = None) -> list[str]:
    """For each entry of the open ``directory`` (of ``only``, when given): one of the same kind in
    ``into`` (a symlink copied); the names of those left to bind. An entry removed meanwhile
    (another job's ``/tmp`` files) is left out."""
    binds = []
    for name in os.listdir(directory):
        if only is not None and name not in only:
            continue
        try:
            if _placeholder(directory, name, os.path.join(into, name)):
                binds.append(name)
        except FileNotFoundError:
            continue
    return binds


def _placeholder(directory: int, name: str, target: str) -> bool:
    """``target`` made like ``name`` (a symlink copied); whether it is left to bind."""
    mode = os.lstat(name, dir_fd=directory).st_mode
    if stat.S_ISLNK(mode):
        if not os.path.lexists(target):
            os.symlink(os.readlink(name, dir_fd=directory), target)
        return False
    if stat.S_ISDIR(mode):
        os.makedirs(target, exist_ok=True)
    elif not os.path.lexists(target):
        open(target, "w").close()
    return True


def _bind_back(source: str, target: str) -> None:
    """Bind an original entry back; one removed meanwhile (another job's ``/tmp`` files) is left out."""
    result = _libc().mount(source.encode(), target.encode(), None, MS_BIND | MS_REC, None)
    if result != 0 and ctypes.get_errno() != errno.ENOENT:
        _call(result, f"mount {source} on {target}")


def _replace_dir(path: str, source: str | None, only: set[str] | None = None) -> None:
    """``path`` shows ``source`` (a fresh tmpfs when None) with ``path``'s original entries (those
    in ``only``, when given) bound back into it."""
    if not os.path.isdir(path):
        raise ViewError(f"this machine has no {path} directory")
    original = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        if source is None:
            mount("tmpfs", path, "tmpfs", 0, "mode=755")
        binds = _placeholders(original, source or path, only)
        if source is not None:
            _bind(source, path)
        for name in binds:
            _bind_back(f"/proc/self/fd/{original}/{name}", os.path.join(path, name))
    finally:
        os.close(original)


def _opt_without_ml() -> None:
    """A tmpfs on ``/opt`` holding every original ``/opt`` entry (bound back) and an empty ``ml``."""
    if not os.path.isdir(OPT):
        raise ViewError("this machine has neither /opt/ml nor /opt to mount it in")
    _replace_dir(OPT, None)
    os.mkdir(OPT_ML)


def _sshd(program: str) -> None:
    """``program`` at ``/usr/sbin/sshd``: over the machine's, else in a tmpfs copy of ``/usr/sbin``."""
    if not os.path.exists(SSHD):
        _replace_dir(os.path.dirname(SSHD), None)
        open(SSHD, "w").close()
    mount(program, SSHD, None, MS_BIND)


def _system(tmp: str | None, environment: str | None, sshd: str | None, nested: bool = False) -> None:
    """A container instance's own ``/tmp``, ``/etc/environment`` and ``sshd``; each only when given.
    ``nested``: started inside another instance's view, whose own ``/tmp`` files are not bound
    (only the machine's entries, its mount points)."""
    if tmp:
        _replace_dir(TMP, tmp, mount_points(TMP) if nested else None)
    if environment and os.path.isfile(ETC_ENVIRONMENT):
        mount(environment, ETC_ENVIRONMENT, None, MS_BIND)
    if sshd:
        _sshd(sshd)


def enter(
    opt_ml: str | None,
    cache: str | None = None,
    hosts: str | None = None,
    hostname: str | None = None,
    system: tuple[str | None, str | None, str | None, bool] = (None, None, None, False),
) -> None:
    """This process sees ``opt_ml`` at ``/opt/ml`` (``cache`` at the warm-pool cache), ``hosts``
    at ``/etc/hosts``, ``system`` (tmp, environment, sshd: :func:`_system`), and has ``hostname``
    as its name; each part only when given."""
    if not sys.platform.startswith("linux"):
        raise ViewError(f"mount namespaces need Linux; this is {sys.platform}")
    mounts = bool(opt_ml or hosts or any(system[:3]))
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
    _system(*system)
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
        nested = options.get("--nested") == "yes"
        system = (options.get("--tmp"), options.get("--environment"), options.get("--sshd"), nested)
        enter(
            options.get("--opt-ml"),
            options.get("--cache"),
            options.get("--hosts"),
            options.get("--hostname"),
            system,
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
