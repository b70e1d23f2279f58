"""The observed graph's hook on Python's audit events: a host call's outbound connections,
files written and processes started.

Python raises an audit event (PEP 578, ``sys.addaudithook``) before each of these operations;
one hook, added once per process when observing starts, counts those of a host call as its
effects (``effect_observer``):

- ``socket.connect`` to an internet address: ``network``, named by the host name the thread
  last resolved for that port (``socket.getaddrinfo``, as HTTP clients do just before), else
  by the address; a local socket (``AF_UNIX``) is not the network;
- ``open`` with a writing mode or flags, and the ``os`` and ``shutil`` events that create,
  change or remove files: ``file.write`` (an import's bytecode cache, its folder, file and
  the temporary file renamed onto it, is not the call's);
- ``subprocess.Popen``, ``os.system``, ``os.exec``, ``os.spawn``, ``os.posix_spawn``,
  ``os.fork``: ``subprocess``.

An audit hook cannot be removed, so it stays for the process's life; with no observer (off,
or outside a host call) an event costs one dictionary lookup and, for the events above, one
context-variable read. The hook never raises: an exception there would abort the host's
operation. Nothing of an event's arguments is kept but the host name, and at most 256 host
names a process (a caller may choose where a tool connects): after them, ``*``.
"""

from __future__ import annotations

import os
import socket
import sys
import threading
from typing import Any

from beammcp_django.connectome.core.effect_observer import EffectObserver
from beammcp_django.connectome.core.effects import ANY_HOST, FILE_WRITE, NETWORK, SUBPROCESS, Effect
from beammcp_django.protocol.calling import host_call

_WRITING_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_TRUNC
_FILE_EVENTS = frozenset(
    {
        "os.remove", "os.rename", "os.rmdir", "os.mkdir", "os.truncate", "os.chmod",
        "os.chown", "os.link", "os.symlink", "shutil.rmtree", "shutil.move",
        "shutil.copyfile", "shutil.copytree",
    }
)  # fmt: skip
_PROCESS_EVENTS = frozenset(
    {"subprocess.Popen", "os.system", "os.exec", "os.spawn", "os.posix_spawn", "os.fork",
     "os.forkpty"}
)  # fmt: skip
_WATCHED = _FILE_EVENTS | _PROCESS_EVENTS | {"open", "socket.connect", "socket.getaddrinfo"}
# Audit events are raised in the frame of the operation: the host's frames are above it.
_DEPTH = 2


# A host call may connect where its caller says (a URL argument): past this many hosts a
# process names no new one, and longer names are cut, so no caller grows the tables.
_HOST_LIMIT = 256
_HOST_CHARACTERS = 253  # the longest DNS name


class _State:
    observer: EffectObserver | None = None
    hosts: set[str] = set()
    installed = False
    lock = threading.Lock()
    resolved = threading.local()  # the (host name, port) this thread last looked up


def _bytecode_cache(path: Any) -> bool:
    """Whether ``path`` is where an import writes its bytecode cache: a ``__pycache__`` folder
    (or one under ``sys.pycache_prefix``), a ``.pyc``, or the temporary file renamed onto
    it. The interpreter writes those, whichever call first imports the module."""
    if not isinstance(path, (str, bytes, os.PathLike)):
        return False
    name = os.fsencode(path)
    prefix = sys.pycache_prefix
    if prefix and name.startswith(os.fsencode(prefix)):
        return True
    return b"__pycache__" in name or name.endswith(b".pyc") or b".pyc." in name


def _writes(arguments: tuple[Any, ...]) -> bool:
    path, mode, flags = (*arguments, None, None, None)[:3]
    # A descriptor wrapped in a file object (``open(fd, "wb")``) was opened already, by a
    # path whose own event said whether it writes: counted there, or not a file at all.
    if isinstance(path, int) or _bytecode_cache(path):
        return False
    if isinstance(mode, str):
        return bool(set(mode) & set("wax+"))
    return isinstance(flags, int) and bool(flags & _WRITING_FLAGS)


def _network(arguments: tuple[Any, ...]) -> Effect | None:
    sock, address = arguments[0], arguments[1]
    if getattr(sock, "family", None) not in (socket.AF_INET, socket.AF_INET6):
        return None
    if not isinstance(address, tuple) or len(address) < 2:
        return None
    host, port = address[0], address[1]
    named = getattr(_State.resolved, "last", None)
    if named is not None and named[1] == port:
        host = named[0]
    host = str(host)[:_HOST_CHARACTERS]
    hosts = _State.hosts
    if host not in hosts:
        if len(hosts) >= _HOST_LIMIT:
            return Effect(NETWORK, ANY_HOST)  # a host the caller may have chosen: no new node
        hosts.add(host)
    return Effect(NETWORK, host)


def _effect(event: str, arguments: tuple[Any, ...]) -> Effect | None:
    if event == "open":
        return Effect(FILE_WRITE) if _writes(arguments) else None
    if event == "socket.getaddrinfo":
        host, port = arguments[0], arguments[1]
        if isinstance(host, bytes):
            host = host.decode("ascii", "replace")
        if isinstance(host, str):
            _State.resolved.last = (host, port)
        return None
    if event == "socket.connect":
        return _network(arguments)
    if event in _FILE_EVENTS:
        return None if arguments and _bytecode_cache(arguments[0]) else Effect(FILE_WRITE)
    return Effect(SUBPROCESS)


def _hook(event: str, arguments: tuple[Any, ...]) -> None:
    if event not in _WATCHED:
        return
    observer = _State.observer
    if observer is None or host_call.get() is None:
        return
    try:
        effect = _effect(event, arguments)
        if effect is not None:
            observer.note(effect, event, depth=_DEPTH)
    except Exception:
        pass


def observe(observer: EffectObserver | None) -> None:
    """Count the events of host calls for ``observer`` from now on (None: for nobody); the
    hook is added to the process the first time."""
    with _State.lock:
        _State.observer = observer
        if observer is not None and not _State.installed:
            sys.addaudithook(_hook)
            _State.installed = True
