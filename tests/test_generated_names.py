"""User text never runs as code (issue #19, item 2).

Node names, scope names, attribute keys and string attributes reach generated source (the
plan of ``Session.run``, the stepper's generator, fused CPU kernels and fused CUDA kernels,
both written to disk and imported) only as escaped comments, ``repr`` literals or table
lookups (:mod:`kernelgraph.codegen`). Every name below must run, step, explain and show as
the same text in every view, and execute nothing: the hostile payloads write a file when
they run, and each test checks that no file was written.
"""

from __future__ import annotations

import contextlib
import io
import os
import tokenize

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import kernelgraph as kg
from kernelgraph import codegen
from kernelgraph.errors import FailedPreconditionError, InvalidArgumentError
from kernelgraph.widgets import svg
from kernelgraph.widgets.compiler import compiler_document
from kernelgraph.widgets.display import bundle_of, mimebundle
from kernelgraph.widgets.document import graph_document, run_document
from kernelgraph.widgets.stepper import stepper_bundle

VALUE = np.array([-1.5, 0.5, 2.0], np.float32)
WANT = np.maximum(VALUE * np.float32(2.0) + np.float32(1.0), 0)  # relu(x * 2 + 1)
# Every character str.splitlines (so linecache and the stepper) breaks a line at, some of
# which Python's tokenizer does not; NUL (compile() refuses it), lone surrogates (no UTF-8
# file can hold them), quotes, backslashes and comment signs.
SPECIAL = ["\n", "\r", "\r\n", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85", "\u2028",
           "\u2029", "\x00", "\ud800", "\udfff", "'", '"', "\\", "#", "coding:", "\t"]
NAMES = st.lists(st.one_of(st.sampled_from(SPECIAL), st.characters(exclude_categories=())),
                 min_size=1, max_size=24).map("".join)


@pytest.fixture(scope="module", autouse=True)
def _kernel_cache(tmp_path_factory):
    # Generated kernels of this module go to a folder of their own, not the user's cache.
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("KERNELGRAPH_CACHE", str(tmp_path_factory.mktemp("kernels")))
        yield


@pytest.fixture(scope="module")
def sentinel(tmp_path_factory) -> str:
    """The file every hostile payload writes when it runs (it must never exist)."""
    return str(tmp_path_factory.mktemp("payload") / "owned.txt")


def payloads(sentinel: str) -> list[str]:
    """Names that run ``code`` wherever a generator pastes them into source."""
    code = f"__import__('pathlib').Path({sentinel!r}).write_text('x')"
    out = []
    for brk in ["\n", "\r", "\r\n", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85",
                "\u2028", "\u2029"]:
        out.append(f"d{brk}    {code}{brk}#")  # indented like a plan's body
        out.append(f"d{brk}{code}{brk}#")  # at column 0, like a kernel module's top level
    return out + [
        f"x\n    {code}; (",  # a line that would swallow the rest of the statement
        "nul\x00byte", "lone\ud800surrogates\udfff", "q'u\"o'''t\"\"\"es",
        "back\\slash\\", "hash # ) ] }", "é名\u200b\ufeffñame",
        "n" * 100_000, "n" * 100_000 + f"\n{code}\n#",
        # An encoding declaration on a kernel file's first line would make Python decode the
        # file with unicode_escape, turning escaped line breaks back into real ones.
        f"coding:unicode_escape \\n{code}\\n#", f"coding=unicode_escape\n{code}\n#",
    ]


def _graph(name: str, device: str = "cpu", scope: str | None = None):
    """x -> relu(x * 2 + 1) (one fused group) -> cast to float64 (a string attribute) ->
    sum (attributes as literals), every node called ``name``."""
    g = kg.Graph()
    scoped = kg.name_scope(scope) if scope else contextlib.nullcontext()
    with g.as_default(), kg.device(device), scoped:
        x = kg.placeholder(kg.float32, shape=[3], name=name)
        a = kg.multiply(x, 2.0, name=name)
        b = kg.add(a, 1.0, name=name)
        c = kg.relu(b, name=name)
        s = kg.reduce_sum(kg.cast(c, "float64", name=name), axis=0, name=name)
    return g, x, [a, b, c], s


def _fused(plan) -> list:
    return [n for n in plan.order if hasattr(n.op.forward, "members")]


def comments(source: str) -> list[str]:
    """The comments of generated ``source``, checking on the way that it is text a file can
    hold, broken into lines at "\n" only (as linecache and the stepper split it)."""
    assert "\x00" not in source
    source.encode("utf-8")  # no lone surrogate
    assert len(source.splitlines()) == source.count("\n")
    tokens = tokenize.generate_tokens(io.StringIO(source).readline)
    return [t.string[2:] for t in tokens if t.type == tokenize.COMMENT]


def node_comments(source: str, nodes) -> None:
    """``source`` names ``nodes``, in order, in their escaped form: the last comments."""
    expected = [codegen.comment(n if isinstance(n, str) else n.name) for n in nodes]
    assert comments(source)[-len(expected):] == expected


def drive(name: str, device: str = "cpu", scope: str | None = None) -> None:
    """``name`` through every path that generates code, and every view of the result."""
    g, x, (a, b, c), s = _graph(name, device, scope)
    feed = {x: VALUE}
    want_sum = float(WANT.astype(np.float64).sum())
    for options in ({}, {"skip_passes": ("fuse",)}, {"optimize": False},
                    {"check_numerics": True}):
        with kg.Session(g, **options) as sess:
            got_c, got_s = sess.run([c, s], feed)
            np.testing.assert_array_equal(got_c, WANT)
            assert float(got_s) == want_sum
            plan = sess.plan([c, s], feed)
            assert comments(plan.source) == [codegen.comment(n.name)
                                             for n in plan.line_nodes.values()]
    with kg.Session(g) as sess:
        plan = sess.plan([c, s], feed)
        (fused,) = _fused(plan)  # x * 2 + 1 and the relu: one kernel, named by its members
        assert fused.op.forward.members == [a.name, b.name, c.name]
        node_comments(fused.op.forward.source, [a, b, c])
        # The stepper: the plan's own code, one step per node; values keyed by name.
        for optimize in (False, True):
            stepper = sess.step([c, s], feed, optimize=optimize)
            assert comments(stepper.source) == comments(stepper.plan.source)
            got_c, got_s = stepper.run()
            np.testing.assert_array_equal(got_c, WANT)
            assert float(got_s) == want_sum
            np.testing.assert_array_equal(stepper.values[c.name], WANT)
            np.testing.assert_array_equal(stepper.values[x.name], VALUE)
            if not optimize:
                np.testing.assert_array_equal(stepper.values[a.name], VALUE * np.float32(2))
            assert stepper.executed[-1].name == s.name
            _same_text_in_bundle(stepper_bundle(stepper), [c.name, s.name])
        # Session.explain and the compiler view.
        e = sess.explain([c, s], feed)
        assert {x.name, a.name, b.name, c.name, s.name} <= {n.name for n in e.before}
        assert e.kernels[c.name] == fused.op.forward.source
        doc = compiler_document(e)
        assert [k["members"] for k in doc["compiler"]["kernels"]] == [[a.name, b.name, c.name]]
        assert doc["compiler"]["plan_source"] == e.source
        assert {x.name, c.name, s.name} <= {n["name"] for n in doc["nodes"]}
        bundle_of(doc)  # its SVG and text fallbacks are made without error
        # kg.show: the graph, and one traced run (a plan of its own, traced lines).
        _same_text_in_bundle(mimebundle(g), [x.name, a.name, c.name, s.name])
        traced = run_document(sess, [c, s], feed)
        values = {n["name"]: n.get("value") for n in traced["nodes"]}
        assert set(values) >= {x.name, a.name, b.name, c.name, s.name}
        assert {n["name"] for n in graph_document(g)["nodes"]} == {
            n.name for n in g.nodes}


def _same_text_in_bundle(bundle: dict, names: list[str]) -> None:
    doc = bundle["application/vnd.kernelgraph.graph+json"]
    shown = {n["name"] for n in doc["nodes"]}
    image = bundle["image/svg+xml"]
    for name in names:
        assert name in shown
        if len(doc["nodes"]) <= 200:  # bigger documents fold scopes in the SVG
            assert svg.esc(name) in image  # its tooltip: the name, as XML can hold it


def drive_errors(name: str) -> None:
    """Errors raised inside a plan name the node as the user wrote it."""
    g = kg.Graph()
    with g.as_default():
        x = kg.placeholder(kg.float32, shape=[3], name=name)
        # An attribute whose key and string value are the user's text: passed by table and
        # as a literal, then refused by the kernel at run time.
        bad = kg.reduce_sum(x, axis=0, name=name, **{"k" + name: name, "ok": name})
        w = kg.Variable(np.zeros(3, np.float32), name=name)
        step = w.assign_sub(x * 0.5, name=name)  # a fused update (w - x * 0.5)
    for options in ({}, {"optimize": False}):
        with kg.Session(g, **options) as sess:
            with pytest.raises(InvalidArgumentError) as info:
                sess.run(bad, {x: VALUE})
            assert f"in node '{bad.name}' (op sum)" in str(info.value)
            node_comments(sess.plan(bad, {x: VALUE}).source, [bad])
            with pytest.raises(InvalidArgumentError) as again:
                sess.step(bad, {x: VALUE}).run()
            assert f"in node '{bad.name}'" in str(again.value)
            with pytest.raises(FailedPreconditionError) as info:
                sess.run(step, {x: VALUE})  # w was never initialised
            assert w.name in str(info.value)
            sess.run(w.initializer)
            np.testing.assert_array_equal(sess.run(step, {x: VALUE}), -0.5 * VALUE)


@pytest.mark.parametrize("index", range(len(payloads(""))))
def test_hostile_names_run_as_text_and_execute_nothing(sentinel, index):
    name = payloads(sentinel)[index]
    try:
        drive(name)
        drive_errors(name)
    finally:  # checked first: a payload that ran is the worst failure
        assert not os.path.exists(sentinel), "a node name ran as code"


def test_hostile_names_in_fused_cuda_kernels_execute_nothing(sentinel):
    pytest.importorskip("kernelgraph.kernels.cuda.core")
    for name in payloads(sentinel):
        g, x, (a, b, c), _ = _graph(name, "cuda")
        with kg.Session(g) as sess:
            np.testing.assert_array_equal(sess.run(c, {x: VALUE}), WANT)
            (fused,) = _fused(sess.plan(c, {x: VALUE}))
            assert fused.op.forward.members == [a.name, b.name, c.name]
            source = fused.op.forward.source
            node_comments(source.split("@cuda.jit(cache=True)")[0], [a, b, c])
            # The kernel module's first two lines could declare its encoding: not these.
            assert not codegen._CODING.search("".join(source.splitlines()[:2]))
            np.testing.assert_array_equal(sess.step(c, {x: VALUE}, optimize=True).run(),
                                          WANT)
    assert not os.path.exists(sentinel)


@given(name=NAMES)
def test_any_name_runs_steps_explains_and_shows_as_written(name):
    drive(name)
    drive_errors(name)


@given(name=NAMES, scope=st.from_regex(r"[A-Za-z0-9_.\-]{1,8}", fullmatch=True))
def test_any_name_inside_a_name_scope(name, scope):
    drive(name, scope=scope)


@given(name=NAMES)
def test_any_name_in_a_fused_cuda_kernel(name):
    pytest.importorskip("kernelgraph.kernels.cuda.core")
    g, x, (a, b, c), _ = _graph(name, "cuda")
    with kg.Session(g) as sess:
        np.testing.assert_array_equal(sess.run(c, {x: VALUE}), WANT)
        (fused,) = _fused(sess.plan(c, {x: VALUE}))
        assert fused.op.forward.members == [a.name, b.name, c.name]
        node_comments(fused.op.forward.source.split("@cuda.jit(cache=True)")[0], [a, b, c])


@given(scope=NAMES.filter(lambda s: not all(c.isascii() and (c.isalnum() or c in "_.-/")
                                            for c in s)))
def test_a_scope_name_outside_tf1s_alphabet_is_refused(scope):
    with kg.Graph().as_default(), pytest.raises(ValueError, match="not a valid scope name"):
        with kg.name_scope(scope):
            pass


def test_op_names_become_kernel_names_only_as_identifiers(sentinel):
    """An op defined with any name gets a plain identifier in the plan, never shared with
    another object (two ops called alike, or an op called like the plan's own helpers)."""
    from kernelgraph.ops.registry import Op

    code = f"__import__('pathlib').Path({sentinel!r}).write_text('x')"

    def infer(shapes, dtypes, attrs):
        return shapes[0], dtypes[0]

    twice = Op(f"twice(x)\n{code}\n#", lambda x: x * 2, infer, None)
    thrice = Op(f"twice(x)\n{code}\n#", lambda x: x * 3, infer, None)  # the same name
    store = Op("store", lambda x: x + 1, infer, None)  # would be `_store`, the variables
    run = Op("run", lambda x: x + 5, infer, None)  # would be `_run`, the plan itself
    g = kg.Graph()
    with g.as_default():
        x = kg.placeholder(kg.float32, shape=[3], name="x")
        y = run(store(thrice(twice(x))))
    for options in ({}, {"optimize": False}):
        with kg.Session(g, **options) as sess:
            np.testing.assert_array_equal(sess.run(y, {x: VALUE}), VALUE * 6 + 6)
            np.testing.assert_array_equal(sess.step(y, {x: VALUE}).run(), VALUE * 6 + 6)
            plan = sess.plan(y, {x: VALUE})
            assert comments(plan.source) == [codegen.comment(n.name)
                                             for n in plan.line_nodes.values()]
            assert "= _store_2(" in plan.source and "= _run_2(" in plan.source
    assert not os.path.exists(sentinel)


# -- the escaping helper ----------------------------------------------------------------------
@given(text=st.one_of(NAMES, st.text(st.characters(exclude_categories=()), max_size=400)))
def test_a_comment_is_one_printable_line_and_tells_names_apart(text):
    shown = codegen.comment(text)
    assert shown.isprintable() and len(shown) <= 10 * codegen.COMMENT_LIMIT + 40
    assert not codegen._CODING.search(shown)
    if len(text) < codegen.COMMENT_LIMIT:  # escaping is one-to-one up to the limit
        assert codegen.comment(text + "\n") != shown
        assert codegen.comment(text + "\\n") != codegen.comment(text + "\n")
    compile(f"x = 1  # {shown}\n", "<comment>", "exec")


def test_plain_names_are_their_own_comment_and_others_are_escaped():
    for name in ("layer1/relu", "w1/Assign", "loss/logits/to_cpu", "gradients/mul_1_grad",
                 "é名 x-y.z"):
        assert codegen.comment(name) == name
    assert codegen.comment("a\nb\x00c\ud800") == "a\\nb\\x00c\\ud800"
    assert codegen.comment("back\\slash") == "back\\\\slash"
    assert codegen.comment("coding: latin-1") == "coding\\x3a latin-1"
    assert codegen.comment("x" * 100_000) == "x" * codegen.COMMENT_LIMIT + (
        "... (100000 characters)")


def test_a_namespace_never_gives_one_name_two_meanings():
    ns = codegen.Namespace(reserved=("_run",))
    assert ns.bind("_add", len) == "_add"
    assert ns.bind("_add", len) == "_add"  # the same object keeps its name
    assert ns.bind("_add", abs) == "_add_2"
    assert ns.bind("_add_2", min) == "_add_2_2"
    assert ns.bind("_run", max) == "_run_2"
    assert ns.bind("_a b\n(", sum) == "_a_b__"
    assert ns.bind("lambda", any) == "_lambda"
    assert ns.env == {"_add": len, "_add_2": abs, "_add_2_2": min, "_run_2": max,
                      "_a_b__": sum, "_lambda": any}


def test_the_benchmark_chain_writes_only_numbers_into_its_source(sentinel):
    from kernelgraph.bench import cases

    class Sneaky(float):
        def __repr__(self):
            return f"__import__('pathlib').Path({sentinel!r}).write_text('x')"

    with pytest.raises(ValueError, match="finite int or float, got Sneaky"):
        cases.make_chain(np.tanh, np.tanh, chain=[("mul", Sneaky(1.0))])
    with pytest.raises(ValueError, match="chain ops are mul, add, tanh, sigmoid"):
        cases.chain_source([("mul\n", 1.0)])
    assert cases.chain_source(cases.CHAIN[:2]) == (
        "def chain(x):\n    x = x * 1.01\n    x = x + 0.5\n    return x\n")
    assert not os.path.exists(sentinel)


def test_the_cuda_map_kernels_take_only_an_identifier_as_their_function():
    pytest.importorskip("kernelgraph.kernels.cuda.core")
    from kernelgraph.kernels.cuda import elementwise

    for fn in ("f(x)\nimport os\n#", "ﬁ", "lambda", 3):
        with pytest.raises(ValueError, match="ASCII identifier"):
            elementwise.nary_kernel_source(2, fn)
    assert "out[i] = fused(a0[i * k0], a1[i * k1])" in elementwise.nary_kernel_source(2, "fused")
