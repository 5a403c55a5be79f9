"""A TF1 program using ``tf.flags`` and ``tf.app.run``, run as its own process by
record_tf_graph_io.py (with real TF) and by tests/test_tf_program_helpers.py (with
kernelgraph): the module to import as ``tf`` is named by the environment variable TFMOD, what
the program does by MODE; it prints one JSON line of what it saw."""

import importlib
import json
import os
import sys

tf = importlib.import_module(os.environ["TFMOD"])
mode = os.environ["MODE"]
tf.app.flags.DEFINE_string("data_dir", "/tmp/data", "where the data is")
tf.flags.DEFINE_integer("steps", 10, "how many steps")
tf.flags.DEFINE_float("learning_rate", 0.01, "step size")
tf.flags.DEFINE_boolean("verbose", False, "say more")
tf.flags.DEFINE_bool("shuffle", True, "shuffle the data")
FLAGS = tf.app.flags.FLAGS


def seen(extra=None):
    return {"data_dir": FLAGS.data_dir, "steps": FLAGS.steps, "lr": FLAGS.learning_rate,
            "verbose": FLAGS.verbose, "shuffle": FLAGS.shuffle, **(extra or {})}


def main(argv):
    print(json.dumps(seen({"argv": argv[1:]})))


if mode == "read":  # a flag read directly: the command line is parsed then
    try:
        print(json.dumps(seen()))
    except Exception as e:  # noqa: BLE001 - what a program sees
        print(json.dumps({"error": type(e).__name__, "message": str(e)}))
elif mode == "run":  # tf.app.run: unknown flags tolerated, left for main
    try:
        tf.app.run(main)
    except SystemExit:
        pass
elif mode == "bad":  # a value of the wrong type
    try:
        print(json.dumps(seen()))
    except Exception as e:  # noqa: BLE001
        print(json.dumps({"error": type(e).__name__, "message": str(e)}))
sys.stdout.flush()
