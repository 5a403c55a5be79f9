"""The library's version: on the bottom floor, so that what records it (a checkpoint's
metadata) needs no import of the package's public face, which re-exports it."""

__version__ = "0.1.0"
