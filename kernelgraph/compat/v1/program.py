"""What a TF1 program calls around its graph: ``tf.logging`` (Python's logging, under the
name 'tensorflow'), ``tf.app.run`` and ``tf.app.flags``, and ``tf.compat.v1`` (so that
``tf.compat.v1.placeholder`` resolves when ``import tensorflow as tf`` became
``import kernelgraph.compat.v1 as tf``)."""

from __future__ import annotations

import logging as _logging
import sys
import types

from . import flags

_logger = _logging.getLogger("tensorflow")

DEBUG, INFO, WARN, ERROR, FATAL = (_logging.DEBUG, _logging.INFO, _logging.WARNING,
                                   _logging.ERROR, _logging.FATAL)


def set_verbosity(v) -> None:
    """Messages below level ``v`` are not shown (kernelgraph itself logs nothing)."""
    _logger.setLevel(v)


def get_verbosity() -> int:
    return _logger.getEffectiveLevel()


logging = types.SimpleNamespace(
    DEBUG=DEBUG, INFO=INFO, WARN=WARN, WARNING=WARN, ERROR=ERROR, FATAL=FATAL,
    set_verbosity=set_verbosity, get_verbosity=get_verbosity,
    debug=_logger.debug, info=_logger.info, warn=_logger.warning, warning=_logger.warning,
    error=_logger.error, fatal=_logger.critical, log=_logger.log,
)
"""The ``tf.logging`` namespace."""


def run(main=None, argv=None):
    """``tf.app.run(main)``: parses the command line's flags (``tf.flags``; unknown ones
    tolerated, as TF1's), calls ``main`` with the program name and the arguments left, and
    exits with what it returns."""
    main = main or sys.modules["__main__"].main
    sys.exit(main(flags.parse_known(argv)))


app = types.SimpleNamespace(run=run, flags=flags)
"""The ``tf.app`` namespace (``tf.app.run``, ``tf.app.flags``)."""


def compat_namespace(package) -> types.SimpleNamespace:
    """``tf.compat``: ``v1`` is ``package`` itself."""
    return types.SimpleNamespace(v1=package)


__all__ = ["app", "logging"]
