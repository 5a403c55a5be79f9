"""TF1's ``tf.gfile``: its file functions over Python's own file IO (local paths only; TF's
``gs://`` and ``hdfs://`` file systems are not there, and such a path is refused by name).

>>> import kernelgraph.compat.v1 as tf, tempfile, os
>>> d = os.path.join(tempfile.mkdtemp(), "logs", "run1")
>>> tf.gfile.MakeDirs(d); tf.gfile.Exists(d), tf.gfile.IsDirectory(d)
(True, True)
>>> with tf.gfile.GFile(os.path.join(d, "a.txt"), "w") as f:
...     _ = f.write("hello\\n")
>>> tf.gfile.ListDirectory(d), tf.gfile.GFile(os.path.join(d, "a.txt")).read()
(['a.txt'], 'hello\\n')
>>> tf.gfile.DeleteRecursively(os.path.dirname(d)); tf.gfile.Exists(d)
False
"""

from __future__ import annotations

import glob as _glob
import os
import shutil
import types

from ... import errors


def _path(name) -> str:
    name = os.fspath(name)
    if isinstance(name, bytes):
        name = name.decode()
    scheme = name.split("://", 1)[0] if "://" in name else ""
    if scheme and scheme != "file":
        raise errors.UnimplementedError(
            None, None, f"File system scheme '{scheme}' not implemented (file: {name})")
    return name[len("file://"):] if scheme else name


def _not_found(name, e):
    return errors.NotFoundError(None, None, f"{name}; {e.strerror or e}")


class GFile:
    """TF1's ``tf.gfile.GFile(name, mode)`` (and ``FastGFile``): a file, opened on first
    use, with ``read(n)``, ``readline``, ``readlines``, ``write``, ``seek``, ``tell``,
    ``size``, ``flush``, ``close``, iteration and ``with``. Modes as Python's ('r', 'rb',
    'w', 'wb', 'a'); text is read and written as UTF-8. A missing file is TF's
    ``NotFoundError``."""

    def __init__(self, name, mode: str = "r"):
        if mode.replace("b", "").replace("+", "") not in ("r", "w", "a"):
            raise errors.InvalidArgumentError(None, None, f"mode {mode!r} is not r, w or a")
        self.name = _path(name)
        self.mode = mode
        self._file = None

    def _f(self):
        if self._file is None:
            try:
                self._file = open(self.name, self.mode,
                                  **({} if "b" in self.mode else {"encoding": "utf-8"}))
            except FileNotFoundError as e:
                raise _not_found(self.name, e) from None
        return self._file

    def read(self, n: int = -1):
        return self._f().read(n)

    def readline(self):
        return self._f().readline()

    def readlines(self):
        return self._f().readlines()

    def write(self, data):
        f = self._f()
        if "b" not in self.mode and isinstance(data, bytes):
            data = data.decode("utf-8")
        return f.write(data)

    def seek(self, offset: int = 0, whence: int = 0, position=None):
        return self._f().seek(offset if position is None else position, whence)

    def tell(self) -> int:
        return self._f().tell()

    def size(self) -> int:
        return os.path.getsize(self.name)

    def flush(self) -> None:
        if self._file is not None:
            self._file.flush()

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None

    def __iter__(self):
        return iter(self._f())

    def __next__(self):
        return next(self._f())

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


FastGFile = GFile
Open = GFile


def Exists(filename) -> bool:  # noqa: N802 - TF's spelling
    return os.path.exists(_path(filename))


def IsDirectory(dirname) -> bool:  # noqa: N802
    return os.path.isdir(_path(dirname))


def MakeDirs(dirname) -> None:  # noqa: N802
    """The directory and its missing parents (no error if it exists)."""
    os.makedirs(_path(dirname), exist_ok=True)


def MkDir(dirname) -> None:  # noqa: N802
    """One directory: its parent must exist; an existing one is TF's AlreadyExistsError."""
    path = _path(dirname)
    try:
        os.mkdir(path)
    except FileExistsError:
        raise errors.AlreadyExistsError(None, None, f"{path}; File exists") from None
    except FileNotFoundError as e:
        raise _not_found(path, e) from None


def ListDirectory(dirname) -> list:  # noqa: N802
    """The entries' names (not paths) of a directory, sorted; a missing one NotFoundError."""
    path = _path(dirname)
    if not os.path.isdir(path):
        raise errors.NotFoundError(None, None, f"Could not find directory {path}")
    return sorted(os.listdir(path))


def Glob(filename) -> list:  # noqa: N802
    return sorted(_glob.glob(_path(filename)))


def Remove(filename) -> None:  # noqa: N802
    path = _path(filename)
    try:
        os.remove(path)
    except FileNotFoundError as e:
        raise _not_found(path, e) from None


def DeleteRecursively(dirname) -> None:  # noqa: N802
    """A directory and all it holds (or one file); a missing path is NotFoundError."""
    path = _path(dirname)
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path)
    elif os.path.lexists(path):
        os.remove(path)
    else:
        raise errors.NotFoundError(None, None, f"{path}; No such file or directory")


def Copy(oldpath, newpath, overwrite: bool = False) -> None:  # noqa: N802
    src, dst = _path(oldpath), _path(newpath)
    if os.path.exists(dst) and not overwrite:
        raise errors.AlreadyExistsError(None, None, f"file already exists: {dst}")
    try:
        shutil.copyfile(src, dst)
    except FileNotFoundError as e:
        raise _not_found(src, e) from None


def Rename(oldname, newname, overwrite: bool = False) -> None:  # noqa: N802
    src, dst = _path(oldname), _path(newname)
    if os.path.exists(dst) and not overwrite:
        raise errors.AlreadyExistsError(None, None, f"file already exists: {dst}")
    try:
        os.replace(src, dst)
    except FileNotFoundError as e:
        raise _not_found(src, e) from None


def Stat(filename):  # noqa: N802
    """``length``, ``mtime_nsec`` and ``is_directory`` of a path, as TF's FileStatistics."""
    path = _path(filename)
    try:
        st = os.stat(path)
    except FileNotFoundError as e:
        raise _not_found(path, e) from None
    return types.SimpleNamespace(length=st.st_size, mtime_nsec=st.st_mtime_ns,
                                 is_directory=os.path.isdir(path))


def Walk(top, in_order: bool = True):  # noqa: N802
    """``(dirname, subdirectory names, file names)`` for ``top`` and each directory under
    it, parents first (``in_order``) or last; nothing for a missing ``top``."""
    for dirpath, dirnames, filenames in os.walk(_path(top), topdown=in_order):
        yield dirpath, sorted(dirnames), sorted(filenames)


gfile = types.SimpleNamespace(
    GFile=GFile, FastGFile=FastGFile, Open=Open, Exists=Exists, IsDirectory=IsDirectory,
    MakeDirs=MakeDirs, MkDir=MkDir, ListDirectory=ListDirectory, Glob=Glob, Remove=Remove,
    DeleteRecursively=DeleteRecursively, Copy=Copy, Rename=Rename, Stat=Stat, Walk=Walk)
"""The ``tf.gfile`` namespace."""
