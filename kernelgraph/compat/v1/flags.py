"""TF1's ``tf.flags`` (also ``tf.app.flags``): absl's flags, as TF1 wraps them.

``DEFINE_string(name, default, help)``, ``DEFINE_integer``, ``DEFINE_float``,
``DEFINE_boolean`` (``DEFINE_bool``), ``DEFINE_enum``, ``DEFINE_list`` ... are absl's
(``absl-py``, which TensorBoard depends on). ``FLAGS`` is TF1's wrapper of absl's flag
values: the first time a program reads a flag, the command line (``sys.argv``) is parsed, so
``FLAGS.learning_rate`` works without ``tf.app.run``. As in TF1, that parse refuses a flag
nobody defined: in Jupyter, whose kernel is started with ``-f <connection file>``, reading a
flag raises absl's ``UnrecognizedFlagError: Unknown command line flag 'f'`` (tutorials
define ``tf.app.flags.DEFINE_string('f', '', 'kernel')`` to get past it), while
``tf.app.run(main)`` parses with unknown flags tolerated and hands ``main`` what is left.

>>> import kernelgraph.compat.v1 as tf
>>> from absl import flags as absl_flags
>>> values = absl_flags.FlagValues()    # a program uses tf.flags.FLAGS itself
>>> tf.flags.DEFINE_integer("batch_size", 32, "examples per step", flag_values=values)
>>> FLAGS = tf.flags.FlagValuesWrapper(values)
>>> FLAGS(["prog", "--batch_size=64"])
['prog']
>>> FLAGS.batch_size
64
"""

from __future__ import annotations

import sys

from absl import flags as _absl


class FlagValuesWrapper:
    """TF1's ``tf.flags.FLAGS``: absl's ``FlagValues``, parsing ``sys.argv`` the first time a
    flag is read (absl's own would raise ``UnparsedFlagAccessError``)."""

    def __init__(self, flag_values):
        self.__dict__["__wrapped"] = flag_values

    def __getattribute__(self, name):
        if name == "__dict__":
            return super().__getattribute__(name)
        return self.__dict__["__wrapped"].__getattribute__(name)

    def __getattr__(self, name):
        if name.startswith("__"):  # Python's own lookups (inspect's __wrapped__) parse nothing
            raise AttributeError(name)
        wrapped = self.__dict__["__wrapped"]
        if not wrapped.is_parsed():
            wrapped(sys.argv)
        return wrapped.__getattr__(name)

    def __setattr__(self, name, value):
        return self.__dict__["__wrapped"].__setattr__(name, value)

    def __delattr__(self, name):
        return self.__dict__["__wrapped"].__delattr__(name)

    def __dir__(self):
        return self.__dict__["__wrapped"].__dir__()

    def __getitem__(self, name):
        return self.__dict__["__wrapped"].__getitem__(name)

    def __setitem__(self, flag, value):
        return self.__dict__["__wrapped"].__setitem__(flag, value)

    def __len__(self):
        return self.__dict__["__wrapped"].__len__()

    def __iter__(self):
        return self.__dict__["__wrapped"].__iter__()

    def __str__(self):
        return self.__dict__["__wrapped"].__str__()

    def __call__(self, *args, **kwargs):
        return self.__dict__["__wrapped"].__call__(*args, **kwargs)


FLAGS = FlagValuesWrapper(_absl.FLAGS)


def _define(absl_define):
    # TF1's DEFINE_* also took the old names flag_name=, default_value=, docstring=
    def define(name=None, default=None, help=None, *args, flag_name=None,  # noqa: A002
               default_value=None, docstring=None, **kwargs):
        name = name if name is not None else flag_name
        default = default if default is not None else default_value
        help = help if help is not None else docstring  # noqa: A001
        if isinstance(kwargs.get("flag_values"), FlagValuesWrapper):
            kwargs["flag_values"] = kwargs["flag_values"].__dict__["__wrapped"]
        absl_define(name, default, help, *args, **kwargs)
    define.__name__ = absl_define.__name__
    define.__doc__ = f"absl's ``{absl_define.__name__}(name, default, help)``."
    return define


DEFINE_string = _define(_absl.DEFINE_string)
DEFINE_integer = _define(_absl.DEFINE_integer)
DEFINE_float = _define(_absl.DEFINE_float)
DEFINE_boolean = DEFINE_bool = _define(_absl.DEFINE_boolean)
DEFINE_list = _define(_absl.DEFINE_list)
DEFINE_multi_string = _define(_absl.DEFINE_multi_string)
DEFINE_multi_integer = _define(_absl.DEFINE_multi_integer)


def DEFINE_enum(name, default, enum_values, help, *args, **kwargs):  # noqa: N802, A002
    """absl's ``DEFINE_enum(name, default, enum_values, help)``."""
    if isinstance(kwargs.get("flag_values"), FlagValuesWrapper):
        kwargs["flag_values"] = kwargs["flag_values"].__dict__["__wrapped"]
    _absl.DEFINE_enum(name, default, enum_values, help, *args, **kwargs)


def parse_known(argv=None) -> list:
    """What ``tf.app.run`` does first: the flags in ``argv`` (``sys.argv``) parsed, unknown
    ones tolerated; returns the program name and the arguments left."""
    return FLAGS(sys.argv if argv is None else argv, known_only=True)


FlagValues = _absl.FlagValues
Flag = _absl.Flag
Error = _absl.Error
UnrecognizedFlagError = _absl.UnrecognizedFlagError
IllegalFlagValueError = _absl.IllegalFlagValueError
mark_flag_as_required = _absl.mark_flag_as_required
mark_flags_as_required = _absl.mark_flags_as_required

# tf.flags is this module itself (a module, as in TF1: the face leaves FLAGS as it is)
__all__ = ["FLAGS", "DEFINE_bool", "DEFINE_boolean", "DEFINE_enum", "DEFINE_float",
           "DEFINE_integer", "DEFINE_list", "DEFINE_multi_integer", "DEFINE_multi_string",
           "DEFINE_string", "Error", "Flag", "FlagValues", "FlagValuesWrapper",
           "IllegalFlagValueError", "UnrecognizedFlagError", "mark_flag_as_required",
           "mark_flags_as_required"]
