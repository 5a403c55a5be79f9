"""Notebook views (kernelgraph.widgets): graph documents, SVG fallback, show(), widgets, timing."""

import json
import subprocess
import sys
import time
import xml.etree.ElementTree as ET

import numpy as np
import pytest

import kernelgraph as kg
from kernelgraph.widgets import (
    MIME_TYPE,
    document_of,
    eager_document,
    graph_document,
    mimebundle,
    record,
    render_svg,
    run_document,
)
from kernelgraph.widgets.summary import summarize

EVIL = "<img src=x onerror=alert(1)>"
SVG_NS = "{http://www.w3.org/2000/svg}"


def by_name(doc):
    return {n["name"]: n for n in doc["nodes"]}


def edges_by_name(doc):
    name = {n["id"]: n["name"] for n in doc["nodes"]}
    return {(name[e["source"]], name[e["target"]]) for e in doc["edges"]}


def steps(doc, phase):
    name = {n["id"]: n["name"] for n in doc["nodes"]}
    return [(name[s["node"]], s) for s in doc["steps"] if s["phase"] == phase]


@pytest.fixture
def classic_static():
    g = kg.Graph()
    with g.as_default():
        a = kg.placeholder(kg.float32, name="a")
        b = kg.placeholder(kg.float32, name="b")
        c = kg.multiply(a, b, name="c")
        da, db = kg.gradients(c, [a, b])
    return g, a, b, c, da, db


def classic_eager():
    a = kg.tensor(15.0, requires_grad=True)
    b = kg.tensor(20.0, requires_grad=True)
    c = a * b
    c.backward()
    return a, b, c


def check_schema(doc):
    assert doc["version"] == 1 and doc["mode"] in ("static", "eager")
    ids = [n["id"] for n in doc["nodes"]]
    assert len(ids) == len(set(ids))
    keys = {"id", "name", "label", "op", "kind", "scope", "shape", "dtype", "device",
            "location", "value", "grad"}
    for n in doc["nodes"]:
        assert set(n) == keys
        assert n["kind"] in ("input", "variable", "const", "leaf", "op", "gradient")
    for e in doc["edges"]:
        assert e["source"] in ids and e["target"] in ids and isinstance(e["label"], str)
    for s in doc["steps"]:
        assert s["node"] in ids and s["phase"] in ("build", "forward", "backward")
    json.dumps(doc)  # JSON-able


# -- documents ----------------------------------------------------------------------------------
def test_static_graph_document(classic_static):
    g, a, b, c, da, db = classic_static
    doc = graph_document(g)
    check_schema(doc)
    nodes = by_name(doc)
    assert nodes["a"]["kind"] == "input" and nodes["c"]["op"] == "mul"
    assert nodes["gradients/ones_like"]["kind"] == "gradient"
    assert nodes["gradients/ones_like"]["scope"] == "gradients"
    assert {("a", "c"), ("b", "c")} <= edges_by_name(doc)
    assert nodes["c"]["location"].startswith("test_widgets.py:")
    assert [s["phase"] for s in doc["steps"]] == ["build"] * len(g.nodes)
    sub = graph_document(fetches=[c])
    assert [n["name"] for n in sub["nodes"]] == ["a", "b", "c"]
    assert edges_by_name(sub) == {("a", "c"), ("b", "c")}


def test_static_run_document_values_and_gradients(classic_static):
    g, a, b, c, da, db = classic_static
    with kg.Session(graph=g) as sess:
        doc = run_document(sess, [c, [da, db]], {a: 15.0, b: 20.0})
    check_schema(doc)
    nodes = by_name(doc)
    assert (nodes["a"]["value"], nodes["b"]["value"], nodes["c"]["value"]) == ("15", "20", "300")
    assert (nodes["a"]["grad"], nodes["b"]["grad"], nodes["c"]["grad"]) == ("20", "15", "1")
    forward = dict(steps(doc, "forward"))
    assert forward["c"]["value"] == "300" and forward["c"]["seconds"] > 0
    backward = steps(doc, "backward")
    assert [n for n, _ in backward] == ["c", "a", "b"]
    assert backward[1][1]["grad"] == "20" and backward[1][1]["grad_norm"] == 20.0


def test_static_run_maps_only_the_gradients_computed():
    g = kg.Graph()
    with g.as_default():
        x = kg.placeholder(kg.float32, shape=[None, 3], name="x")
        w = kg.Variable(np.ones((3, 2), np.float32), name="w")
        loss = kg.reduce_sum(kg.relu(kg.matmul(x, w)), name="loss")
        (dw,) = kg.gradients(loss, [w])
        with kg.Session() as sess:
            sess.run(kg.global_variables_initializer())
            doc = document_of((sess, [loss, dw], {x: [[1.0, 2.0, 3.0]]}))
    nodes = by_name(doc)
    assert nodes["loss"]["value"] == "12"
    assert nodes["w"]["grad"] == "[[1., 1.], [2., 2.], [3., 3.]]"
    assert nodes["x"]["grad"] is None  # kg.gradients was not asked for d loss / d x


def test_eager_document():
    a, b, c = classic_eager()
    doc = eager_document(c, names={"a": a, "b": b, "c": c})
    check_schema(doc)
    nodes = by_name(doc)
    assert [n["kind"] for n in doc["nodes"]] == ["leaf", "leaf", "op"]
    assert [(n["value"], n["grad"]) for n in doc["nodes"]] == [("15", "20"), ("20", "15"),
                                                               ("300", "1")]
    assert nodes["c"]["op"] == "mul" and edges_by_name(doc) == {("a", "c"), ("b", "c")}
    name = {n["id"]: n["name"] for n in doc["nodes"]}
    order = [(s["phase"], name[s["node"]]) for s in doc["steps"]]
    assert order == [("build", "a"), ("forward", "a"), ("build", "b"), ("forward", "b"),
                     ("build", "c"), ("forward", "c"), ("backward", "c"), ("backward", "b"),
                     ("backward", "a")]
    # without names, leaves and nodes are named as kg.graph_of names them
    plain = document_of(c)
    assert [n["name"] for n in plain["nodes"]][:2] == ["leaf0", "leaf1"]


def test_eager_document_from_recorded_events():
    with record() as rec:
        a = kg.tensor([1.0, 2.0], requires_grad=True)
        y = (a * a).sum()
        y.backward()
    doc = document_of(y, names={"a": a}, events=rec.events)
    forward = [s for s in doc["steps"] if s["phase"] == "forward" and s["node"] != "leaf0"]
    assert all(s["seconds"] >= 0 for s in forward) and len(forward) == 2
    assert by_name(doc)["a"]["grad"] == "[2., 4.]"
    assert [s["node"] for s in doc["steps"] if s["phase"] == "backward"][-1] == "leaf0"


def test_document_of_dispatch(classic_static):
    g, a, b, c, da, db = classic_static
    assert len(document_of(g)["nodes"]) == len(g.nodes)
    assert len(document_of(c)["nodes"]) == 3
    assert len(document_of([c, [da, db]])["nodes"]) == len(g.nodes)
    assert document_of(kg.tensor([1.0]) * 2.0)["mode"] == "eager"
    doc = document_of(c)
    assert document_of(doc) is doc
    with pytest.raises(TypeError, match="cannot draw"):
        document_of(42)


def test_summaries():
    assert summarize(300.0) == "300" and summarize(np.float32(0.12345)) == "0.1235"
    assert summarize(None) is None and summarize(True) == "True"
    assert summarize(np.zeros((64, 10))).startswith("shape (64, 10) mean 0")
    assert summarize(kg.tensor([1.0, 2.0])) == "[1., 2.]"


def test_a_mean_below_rounding_shows_as_zero_and_a_real_one_does_not():
    # the weight gradient of a softmax loss sums to 0 over the classes: in float32 its mean
    # comes out as a few epsilons whose digits depend on the machine's summation order
    rng = np.random.default_rng(0)
    logits_grad = rng.standard_normal((64, 10)).astype(np.float32)
    logits_grad -= logits_grad.mean(axis=1, keepdims=True)
    weight_grad = logits_grad.T @ rng.standard_normal((64, 784)).astype(np.float32)
    assert 0 < abs(weight_grad.mean()) < 1e-5
    assert " mean 0 std " in summarize(weight_grad)
    small = np.full(100, 3e-6, dtype=np.float32)
    small[0] = 1e-4
    assert "mean 3.97e-06" in summarize(small)
    assert " mean 2 " in summarize(np.arange(5, dtype=np.int64).repeat(10))


# -- SVG and escaping ---------------------------------------------------------------------------
def test_svg_is_well_formed_and_escapes_names(classic_static):
    g = kg.Graph()
    with g.as_default():
        x = kg.placeholder(kg.float32, name=EVIL)
        y = kg.identity(x * 2.0, name="y")
    with kg.Session(graph=g) as sess:
        doc = run_document(sess, y, {x: 3.0})
    svg = render_svg(doc)
    root = ET.fromstring(svg)
    assert root.tag == SVG_NS + "svg"
    assert all(el.tag.startswith(SVG_NS) for el in root.iter())
    assert not any(el.tag.endswith("img") for el in root.iter())
    assert "<img" not in svg and "&lt;img src=x onerror=alert(1)&gt;" in svg
    titles = [el.text or "" for el in root.iter(SVG_NS + "title")]
    assert any(t.startswith(EVIL) for t in titles)  # the tooltip, as plain text
    assert EVIL in [n["name"] for n in doc["nodes"]]  # plain data in the JSON document
    assert EVIL in json.loads(json.dumps(doc))["nodes"][0]["name"]
    # eager names, titles and values go through the same escaping
    t = kg.tensor([1.0])
    edoc = eager_document(t * 2.0, names={EVIL: t}, title=EVIL)
    esvg = render_svg(edoc)
    ET.fromstring(esvg)
    assert "<img" not in esvg


def test_svg_collapses_scopes_of_big_graphs():
    g = kg.Graph()
    with g.as_default():
        x = kg.placeholder(kg.float32, shape=[None, 4], name="x")
        h = x
        for i in range(60):
            with kg.name_scope(f"block{i}"):
                h = kg.relu(h * 1.5 + 0.5)
    doc = graph_document(g)
    assert len(doc["nodes"]) > 200
    root = ET.fromstring(render_svg(doc))
    kinds = [el.get("data-kind") for el in root.iter(SVG_NS + "g") if el.get("data-kind")]
    assert kinds.count("scope") == 60 and len(kinds) == 61


def test_two_thousand_node_graph_is_fast():
    g = kg.Graph()
    with g.as_default():
        h = kg.placeholder(kg.float32, shape=[None, 8], name="x")
        for _ in range(500):  # const, mul, tanh, add: 4 nodes a step, with fan-in
            h = kg.tanh(h * 0.5) + h
    assert len(g.nodes) == 2001
    start = time.perf_counter()
    doc = graph_document(g)
    svg = render_svg(doc)
    elapsed = time.perf_counter() - start
    ET.fromstring(svg)
    assert len(doc["nodes"]) == len(g.nodes) and elapsed < 3.0, elapsed


# -- show and the MIME bundle -------------------------------------------------------------------
def test_mimebundle_has_document_svg_and_text():
    a, b, c = classic_eager()
    bundle = mimebundle(c, names={"a": a, "b": b})
    assert set(bundle) == {MIME_TYPE, "image/svg+xml", "text/plain"}
    assert bundle[MIME_TYPE]["mode"] == "eager"
    ET.fromstring(bundle["image/svg+xml"])
    assert "a (leaf) = 15  grad 20" in bundle["text/plain"]


def test_show_displays_the_bundle_raw(monkeypatch, classic_static):
    import IPython
    import IPython.display

    shown = []
    monkeypatch.setattr(IPython, "get_ipython", lambda: object())
    monkeypatch.setattr(IPython.display, "display",
                        lambda obj, raw=False: shown.append((obj, raw)))
    g, a, b, c, da, db = classic_static
    with kg.Session(graph=g) as sess:
        assert kg.show((sess, [c, [da, db]], {a: 15.0, b: 20.0})) is None
    (bundle, raw), = shown
    assert raw is True and set(bundle) == {MIME_TYPE, "image/svg+xml", "text/plain"}
    assert by_name(bundle[MIME_TYPE])["b"]["grad"] == "15"
    x = kg.tensor([1.0, 2.0], requires_grad=True)  # noqa: F841 - labelled from the caller
    kg.show(x * 2.0)
    assert shown[-1][0][MIME_TYPE]["nodes"][0]["name"] == "x"


def test_show_outside_ipython_prints_text(capsys):
    kg.show(kg.tensor([1.0]) * 2.0, title="t")
    assert capsys.readouterr().out.startswith("kernelgraph eager graph 't'")


def test_import_kernelgraph_does_not_import_widget_libraries():
    code = ("import sys, kernelgraph as kg; "
            "assert not {'ipywidgets', 'plotly', 'IPython'} & set(sys.modules); "
            "kg.show; assert 'ipywidgets' not in sys.modules; "
            "kg.widgets.GraphWidget; assert 'ipywidgets' in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True)


# -- widgets ------------------------------------------------------------------------------------
def test_graph_widget_traits_and_bundle():
    from kernelgraph.widgets import GraphWidget

    a, b, c = classic_eager()
    w = GraphWidget(c, names={"a": a, "b": b})
    assert (w._model_name, w._view_name) == ("GraphModel", "GraphView")
    assert w._model_module == w._view_module == "kernelgraph-extension"
    assert w._model_module_version == w._view_module_version == "0.1.0"
    assert w.trait_metadata("graph", "sync") and w.trait_metadata("step", "sync")
    assert by_name(w.graph)["a"]["grad"] == "20" and w.step == -1
    state = w.get_state()
    assert state["graph"] == w.graph and state["step"] == -1
    w.step = 3
    assert w.get_state()["step"] == 3
    bundle = w._repr_mimebundle_()
    assert {MIME_TYPE, "image/svg+xml", "text/plain",
            "application/vnd.jupyter.widget-view+json"} <= set(bundle)
    assert bundle["text/plain"].startswith("kernelgraph eager graph")
    w.close()


def test_live_widget_grows_and_stop_detaches():
    from kernelgraph.widgets import GraphWidget

    w = GraphWidget.live()
    assert kg.trace.active and w.is_live
    x = kg.tensor([1.0, 2.0], requires_grad=True)
    y = (x * 3.0).sum()
    w.flush()
    assert [n["op"] for n in w.graph["nodes"]] == ["leaf", "mul", "sum"]
    y.backward()
    z = kg.exp(x)  # noqa: F841
    w.stop()
    assert not kg.trace.active and not w.is_live
    assert [n["op"] for n in w.graph["nodes"]] == ["leaf", "mul", "sum", "exp"]
    assert by_name(w.graph)["x"]["grad"] == "[3., 3.]"  # stop() names leaves from the caller
    assert {s["phase"] for s in w.graph["steps"]} == {"build", "forward", "backward"}
    kg.tensor([1.0]) + 1.0
    assert len(w.graph["nodes"]) == 4  # detached: no longer grows
    w.close()


def test_live_widget_throttles_and_caps_big_graphs():
    from kernelgraph.widgets import GraphWidget

    w = GraphWidget.live(max_nodes=300, interval=0.1)
    sends = []
    w.observe(lambda change: sends.append(time.perf_counter()), names="graph")
    start = time.perf_counter()
    h = kg.tensor(np.ones(16, np.float32), requires_grad=True)
    for _ in range(1000):
        h = kg.tanh(h * 0.9)
    h.sum().backward()
    elapsed = time.perf_counter() - start
    w.stop()
    assert len(w.graph["nodes"]) == 300
    assert "not drawn" in w.graph["title"]
    assert len(sends) <= elapsed / 0.1 + 2
    assert elapsed < 5.0


def test_compare_times_both_modes():
    from kernelgraph.widgets import TimingWidget, compare

    rows = compare(values=(1, 3), sweep="samples", display=False,
                   config={"inputs": 4, "hidden": 8, "classes": 3})
    assert [(r["mode"], r["value"], r["steps"]) for r in rows] == [
        ("static", 1, 1), ("eager", 1, 1), ("static", 3, 3), ("eager", 3, 3)]
    for r in rows:
        assert r["execution"] > 0 and r["construction"] >= 0
        assert r["total"] == pytest.approx(r["construction"] + r["compilation"] +
                                           r["execution"])
        if r["mode"] == "static":
            assert r["construction"] > 0 and r["compilation"] > 0
        else:
            assert r["compilation"] == 0
    assert rows[0]["loss"] == rows[1]["loss"]  # the two modes compute the same model
    w = TimingWidget(values=(2,), sweep="batch", config={"samples": 4, "inputs": 4,
                                                         "hidden": 4, "classes": 2},
                     warmup=False)
    out = w.run()
    assert out[0]["steps"] == 2 and w.progress.value == 2
    assert list(w.figure.data[2].x[1]) == ["static", "eager"]
    assert len(w.figure.data[0].y) == 2
    with pytest.raises(ValueError, match="unknown sweep"):
        TimingWidget(sweep="nope")


def test_compare_rnn_task_in_three_modes():
    from kernelgraph.widgets import TimingWidget, compare, rnn_model

    cfg = {"samples": 4, "batch": 2, "inputs": 3, "hidden": 5, "max_len": 7}
    rows = compare(model=rnn_model(), values=(2, 4), sweep="batch", display=False,
                   config=cfg, modes=("eager", "autobatch", "static"))
    assert [(r["mode"], r["value"]) for r in rows] == [
        ("eager", 2), ("autobatch", 2), ("static", 2), ("eager", 4), ("autobatch", 4),
        ("static", 4)]
    for r in rows:
        assert r["execution"] > 0 and 0 <= r["construction"] < r["total"], r
        # Eager construction is the recorded forward minus the plain one: with the RNN cell
        # one op a step, recording costs about a microsecond, within the timing noise.
        assert r["construction"] > 0 or r["mode"] == "eager", r
    # The same sequences and weights in every mode: the last step's loss agrees.
    for i in (0, 3):
        eager, batched, static = (rows[i + k]["loss"] for k in range(3))
        assert batched == pytest.approx(eager, rel=1e-5)
        assert static == pytest.approx(eager, rel=1e-5)
    w = TimingWidget(values=(2,), sweep="batch", model=rnn_model(), config=cfg, warmup=False,
                     modes=("eager", "autobatch"))
    w.run()
    assert w.progress.max == 2 and list(w.figure.data[0].x[1]) == ["eager", "autobatch"]
    assert "eager vs autobatch" in w.figure.layout.title.text
    with pytest.raises(ValueError, match="unknown modes"):
        TimingWidget(modes=("eager", "lazy"))


def test_displayed_live_widget_leaves_its_final_graph_in_the_output(monkeypatch):
    import IPython.display

    from kernelgraph.widgets import GraphWidget

    class Handle:
        def __init__(self):
            self.updates = []

        def update(self, obj, **kwargs):
            self.updates.append((obj, kwargs))

    handle, shown = Handle(), []

    def fake_display(obj, raw=False, display_id=None):
        shown.append(obj)
        return handle

    monkeypatch.setattr(IPython.display, "display", fake_display)
    w = GraphWidget.live(title="live")
    w._ipython_display_()
    assert shown[0][MIME_TYPE]["nodes"] == []
    x = kg.tensor([1.0], requires_grad=True)
    kg.exp(x)
    w.stop()
    (bundle, kwargs), = handle.updates
    assert kwargs == {"raw": True}
    nodes = bundle[MIME_TYPE]["nodes"]
    assert [(n["name"], n["op"]) for n in nodes][0] == ("x", "leaf") and nodes[1]["op"] == "exp"
    assert "application/vnd.jupyter.widget-view+json" in bundle
    w.close()


# -- the compiler view (kg.show(sess.explain(...))) ---------------------------------------------
def compiler_graph(name_x="x"):
    g = kg.Graph()
    with g.as_default():
        x = kg.placeholder(kg.float32, shape=[None, 3], name=name_x)
        scale = kg.constant(2.0) * kg.constant(3.0)  # folded
        y = kg.relu(x * scale) * 1.0  # "* 1.0" simplified; x * scale and relu fused
        z = kg.relu(x * scale)  # merged with y's relu by cse
        kg.exp(x, name="unused")  # pruned
    return g, x, y, z


def stage(doc, name):
    return next(s for s in doc["compiler"]["stages"] if s["name"] == name)


def test_compiler_document_has_every_stage_with_the_passes_counts():
    from kernelgraph.static import passes
    from kernelgraph.widgets import compiler_document

    g, x, y, z = compiler_graph()
    with kg.Session(g) as sess:
        e = sess.explain([y, z], {x: None})
    doc = compiler_document(e)
    c = doc["compiler"]
    assert [s["name"] for s in c["stages"]] == ["as written", *passes.ORDER]
    for r in e.passes:
        s = stage(doc, r.name)
        assert (s["before"], s["after"], s["changes"]) == (r.before, r.after, r.changes)
        live = [n for n in s["nodes"] if s["marks"].get(n["id"]) != "removed"]
        inside = {m for grp in s["groups"] for m in grp["members"]}
        # fused members are drawn in place of their kernel's one node
        assert len(live) - len(inside) + len(s["groups"]) == r.after
    assert stage(doc, "as written")["after"] == len(g.nodes)
    assert c["selected"] == len(c["stages"]) - 1 and c["skipped"] == [] and c["optimized"]
    assert c["compile_seconds"] == e.compile_seconds and c["plan_source"] == e.source
    # the top level is the compiled graph, drawn by any reader of the plain format
    assert sorted(n["name"] for n in doc["nodes"]) == sorted(n.name for n in e.after)
    check_schema({k: v for k, v in doc.items() if k != "compiler"})
    json.dumps(doc)


def test_compiler_marks_folded_merged_simplified_and_removed_nodes():
    from kernelgraph.widgets import compiler_document

    g, x, y, z = compiler_graph()
    with kg.Session(g) as sess:
        e = sess.explain([y, z], {x: None})
    doc = compiler_document(e)
    name = {n["id"]: n["name"] for s in doc["compiler"]["stages"] for n in s.get("nodes", [])}

    def marked(stage_name, mark):
        s = stage(doc, stage_name)
        return sorted(name[i] for i, m in s["marks"].items() if m == mark)

    changes = {r.name: r.changes for r in e.passes}
    assert marked("prune", "removed") == ["unused"]
    assert marked("fold_constants", "folded") == ["mul"] and changes["fold_constants"] == [
        "folded mul"]
    assert stage(doc, "fold_constants")["notes"][next(
        i for i, n in name.items() if n == "mul")].startswith("folded: mul")
    # each "a -> b" of simplify and cse: b marked (it stands for a), a drawn as a ghost
    for pass_name, mark in (("simplify", "simplified"), ("cse", "merged")):
        pairs = [c.split(" -> ") for c in changes[pass_name]]
        assert marked(pass_name, mark) == sorted({b for _, b in pairs})
        assert marked(pass_name, "removed") == sorted(a for a, _ in pairs)
    assert changes["cse"]  # relu_1 -> relu at least
    previous = {n.name for n in next(r for r in e.passes if r.name == "fuse").nodes}
    inside = {m for n in e.after for m in getattr(n.op.forward, "members", ())}
    gone = previous - {n.name for n in e.after} - inside
    assert gone and marked("dce", "removed") == sorted(gone)
    # ghosts (removed nodes) keep their edges from nodes still drawn
    s = stage(doc, "cse")
    ghost = next(i for i, m in s["marks"].items() if m == "removed")
    assert any(e["target"] == ghost for e in s["edges"])


def test_fused_groups_name_their_members_and_carry_the_kernel_source():
    from kernelgraph.widgets import compiler_document

    g, x, y, z = compiler_graph()
    with kg.Session(g) as sess:
        e = sess.explain([y, z], {x: None})
    doc = compiler_document(e)
    kernels = doc["compiler"]["kernels"]
    assert {k["name"]: k["source"] for k in kernels} == e.kernels
    fused_node = next(n for n in e.after if hasattr(n.op.forward, "members"))
    assert kernels[0]["members"] == list(fused_node.op.forward.members) == ["mul_1", "relu"]
    for name in ("fuse", "dce"):
        s = stage(doc, name)
        (group,) = s["groups"]
        assert group["kernel"] == fused_node.op.name
        ids = {n["id"]: n for n in s["nodes"]}
        assert [ids[m]["name"] for m in group["members"]] == ["mul_1", "relu"]
        assert [ids[m]["op"] for m in group["members"]] == ["mul", "relu"]  # the ops inside
        assert all(s["marks"][m] == "fused" for m in group["members"])
        # the edge between the members is drawn inside the group
        assert {"source": group["members"][0], "target": group["members"][1]} in [
            {k: ed[k] for k in ("source", "target")} for ed in s["edges"]]


def test_skipped_passes_and_optimize_false_are_shown():
    from kernelgraph.widgets import compiler_document
    from kernelgraph.widgets.compiler import compiler_text

    g, x, y, z = compiler_graph()
    with kg.Session(g, skip_passes=("cse", "fuse")) as sess:
        doc = compiler_document(sess.explain([y, z], {x: None}))
    c = doc["compiler"]
    assert c["skipped"] == ["cse", "fuse"] and c["kernels"] == []
    assert stage(doc, "cse")["skipped"] and "nodes" not in stage(doc, "cse")
    assert "cse              skipped" in compiler_text(doc)
    assert "skipped passes: cse, fuse" in compiler_text(doc)
    with kg.Session(g, optimize=False) as sess:
        doc = compiler_document(sess.explain([y, z], {x: None}))
    c = doc["compiler"]
    assert not c["optimized"] and all(s["skipped"] for s in c["stages"][1:-1])
    assert c["stages"][-1]["name"] == "plan" and c["stages"][c["selected"]]["name"] == "plan"
    assert "passes off" in compiler_text(doc)


def test_memory_plan_and_run_time_fields():
    from types import SimpleNamespace

    from kernelgraph.widgets import compiler_document
    from kernelgraph.widgets.compiler import compiler_text

    g = kg.Graph()
    with g.as_default():
        x = kg.placeholder(kg.float32, shape=[4, 3], name="x")
        y = kg.matmul(kg.tanh(x), kg.transpose(x))  # known shapes: bytes can be counted
        out = kg.reduce_sum(kg.exp(y) * 2.0)
    with kg.Session(g) as sess:
        e = sess.explain(out, {x: np.ones((4, 3), np.float32)})
    if getattr(e, "memory", None) is None:  # a session without a planner: its fields
        relu = next(n for n in e.after if n.op.name != "placeholder")
        e.memory = SimpleNamespace(peak_bytes=96, naive_bytes=192,
                                   buffers={n.name: i for i, n in enumerate(e.after)},
                                   in_place={id(relu): e.after[0]})
    doc = compiler_document(e)
    memory = doc["compiler"]["memory"]
    ids = {n["name"]: n["id"] for n in doc["compiler"]["stages"][-1]["nodes"]}
    assert memory["peak_bytes"] == e.memory.peak_bytes > 0
    assert memory["naive_bytes"] == e.memory.naive_bytes >= memory["peak_bytes"]
    assert memory["slots"] == {ids[k]: v for k, v in e.memory.buffers.items()}
    assert memory["buffers"] == len(set(e.memory.buffers.values()))
    by_object = {id(n): n.name for n in e.after}
    assert sorted(memory["in_place"]) == sorted(ids[by_object[k]] for k in e.memory.in_place
                                                if k in by_object)
    text = compiler_text(doc)
    assert "memory: peak" in text and "without reuse" in text
    if getattr(e, "run_seconds", None) is None:
        e.run_seconds = 2.5e-5
    assert compiler_document(e)["compiler"]["run_seconds"] == e.run_seconds
    e.memory = SimpleNamespace(peak_bytes=None, naive_bytes=None, buffers={}, in_place={})
    assert "bytes unknown" in compiler_text(compiler_document(e))
    e.memory = None
    assert compiler_document(e)["compiler"]["memory"] is None


def test_compiler_view_escapes_hostile_names_everywhere():
    from kernelgraph.widgets.compiler import explanation_bundle

    g, x, y, z = compiler_graph(name_x=EVIL)
    with g.as_default():
        w = kg.tanh(kg.sigmoid(x), name="</text><script>alert(2)</script>")
    with kg.Session(g) as sess:
        e = sess.explain([y, z, w], {x: None})
    bundle = explanation_bundle(e)
    assert sorted(bundle) == [MIME_TYPE, "image/svg+xml", "text/plain"]
    svg = bundle["image/svg+xml"]
    root = ET.fromstring(svg)  # well-formed: every name escaped
    assert "<img" not in svg and "<script" not in svg
    assert not list(root.iter(f"{SVG_NS}script")) and not list(root.iter("img"))
    texts = " ".join(t.text or "" for t in root.iter(f"{SVG_NS}text"))
    assert "script" in texts  # drawn as characters
    names = [n["name"] for s in bundle[MIME_TYPE]["compiler"]["stages"]
             for n in s.get("nodes", [])]
    assert EVIL in names  # plain data in the JSON document
    assert "tanh" in bundle["text/plain"] or "fused kernel" in bundle["text/plain"]


def test_show_and_repr_of_an_explanation(monkeypatch):
    import kernelgraph.widgets.display as display

    g, x, y, z = compiler_graph()
    with kg.Session(g) as sess:
        e = sess.explain([y, z], {x: None})
    shown = []
    monkeypatch.setattr(display, "publish", shown.append)
    kg.show(e)
    assert shown and "compiler" in shown[0][MIME_TYPE]
    assert shown[0]["text/plain"].startswith("kernelgraph compiler view")
    if hasattr(e, "_repr_mimebundle_"):
        assert "compiler" in e._repr_mimebundle_()[MIME_TYPE]


# -- step-through (sess.step(...)) --------------------------------------------------------------
def stepped():
    g = kg.Graph()
    with g.as_default():
        a = kg.placeholder(kg.float32, name="a")
        b = kg.placeholder(kg.float32, name="b")
        c = kg.multiply(a, b, name="c")
        d = kg.add(c, 1.0, name="d")
        e = kg.sqrt(d, name=EVIL)
    return g, a, b, c, d, e


def test_stepper_document_follows_the_run():
    from kernelgraph.static.stepper import Stepper
    from kernelgraph.widgets import stepper_document
    from kernelgraph.widgets.stepper import stepper_line

    g, a, b, c, d, e = stepped()
    with kg.Session(g) as sess:
        st_ = Stepper(sess, e, {a: 15.0, b: 20.0})
        doc = stepper_document(st_)
        s = doc["stepper"]
        ids = {n["name"]: n["id"] for n in doc["nodes"]}
        assert s["order"] == [ids["c"], ids["d"], ids[EVIL]] and s["position"] == 0
        assert s["next"] == ids["c"] and not s["done"] and s["error"] is None
        assert doc["steps"] == [] and by_name(doc)["a"]["value"] == "15"
        st_.step()
        st_.step()
        doc = stepper_document(st_)
        assert [(st["node"], st["value"]) for st in doc["steps"]] == [(ids["c"], "300"),
                                                                      (ids["d"], "301")]
        assert all(st["seconds"] >= 0 for st in doc["steps"])
        assert doc["stepper"]["next"] == ids[EVIL]
        assert stepper_line(doc) == f"stepper: 2/3 nodes run, next: {EVIL}"
        st_.run()
        doc = stepper_document(st_)
        assert doc["stepper"]["done"] and doc["stepper"]["next"] is None
        check_schema({k: v for k, v in doc.items() if k != "stepper"})
        bundle = mimebundle(st_)
        ET.fromstring(bundle["image/svg+xml"])
        assert "<img" not in bundle["image/svg+xml"]
        assert bundle["text/plain"].endswith("stepper: 3/3 nodes run, done")


def test_step_widget_buttons_drive_the_stepper():
    from kernelgraph.static.stepper import Stepper
    from kernelgraph.widgets import StepWidget

    g, a, b, c, d, e = stepped()
    with kg.Session(g) as sess:
        w = StepWidget(Stepper(sess, e, {a: 15.0, b: 20.0}))
        assert w._view_name == "StepView" and w._model_name == "GraphModel"
        w._on_message(w, {"action": "step"}, [])
        assert w.graph["stepper"]["position"] == 1 and w.step == -1
        w._on_message(w, {"action": "run_to", "node": w.graph["stepper"]["order"][2]}, [])
        assert w.graph["stepper"]["done"] and w.stepper.fetched == sess.run(e, {a: 15.0, b: 20.0})
        w._on_message(w, {"action": "step"}, [])  # past the end: said, not raised
        assert "finished" in w.message
        w._on_message(w, {"action": "reset"}, [])
        assert w.graph["stepper"]["position"] == 0 and w.message == ""
        w._on_message(w, {"action": "nonsense"}, [])
        w._on_message(w, "junk", [])
        w._on_message(w, {"action": "run_to", "node": "no-such-id"}, [])
        assert "not computed" in w.message
        w.run()
        assert w.graph["stepper"]["done"]
        bad = StepWidget(Stepper(sess, e, {a: -1.0, b: 20.0}))
        bad.run()  # sqrt of a negative number is NaN, not an error: the run completes
        assert bad.graph["stepper"]["done"]
    with pytest.raises(TypeError, match="needs a kg Stepper"):
        StepWidget(e)


def test_step_widget_shows_an_error_at_its_node():
    from kernelgraph.static.stepper import Stepper
    from kernelgraph.widgets import StepWidget

    g = kg.Graph()
    with g.as_default():
        p = kg.placeholder(kg.float32, shape=[None, None], name="p")
        q = kg.placeholder(kg.float32, shape=[None, None], name="q")
        m = kg.matmul(p, q)
    with kg.Session(g) as sess:
        w = StepWidget(Stepper(sess, m, {p: np.ones((2, 3)), q: np.ones((4, 2))}))
        w._on_message(w, {"action": "run"}, [])
        s = w.graph["stepper"]
        assert s["error_node"] == next(n["id"] for n in w.graph["nodes"] if n["name"] == "matmul")
        assert "m = kg.matmul" in s["error"] and "matmul" in w.message


# -- the registry of view kinds ------------------------------------------------------------------
def test_view_kinds_are_registered_and_chosen_by_object_and_by_document():
    from kernelgraph.static.explanation import Explanation
    from kernelgraph.static.stepper import Stepper
    from kernelgraph.widgets import compiler, display, stepper, views

    assert views.VIEWS["compiler"].draws is Explanation
    assert views.VIEWS["stepper"].draws is Stepper
    g, x, y, z = compiler_graph()
    with kg.Session(g) as sess:
        e = sess.explain([y, z], {x: None})
        assert views.for_object(e) is views.VIEWS["compiler"]
        assert views.for_object(x) is None  # graphs, nodes, tensors: the document's own
        doc = document_of(e)
        assert views.for_document(doc) is views.VIEWS["compiler"]
        bundle = display.bundle_of(doc)
        assert bundle["image/svg+xml"] == compiler.compiler_svg(doc)
        assert bundle["text/plain"] == compiler.compiler_text(doc)
    g, a, b, c, d, e = stepped()
    with kg.Session(g) as sess:
        doc = document_of(Stepper(sess, e, {a: 1.0, b: 2.0}))
        assert views.for_document(doc) is views.VIEWS["stepper"]
        assert display.bundle_of(doc)["text/plain"] == (
            display.text_summary(doc) + "\n" + stepper.stepper_line(doc))
    assert views.for_document(document_of(g)) is None


def test_the_widgets_modules_import_each_other_without_a_ring():
    """The view modules build on the document and register their kind; the document and
    the display ask the registry instead of importing the views (they did, late, in a
    ring: display -> compiler -> display)."""
    from tests.test_structure import IMPORTS

    edges: dict[str, set] = {}
    for module, _, _, target, _ in IMPORTS:
        if module.startswith("kernelgraph.widgets.") and target.startswith("kernelgraph.widgets."):
            edges.setdefault(module, set()).add(target)
    done, active = set(), []

    def visit(m):
        assert m not in active, "an import ring: " + " -> ".join(
            [*active[active.index(m):], m] if m in active else [])
        if m in done:
            return
        active.append(m)
        for t in sorted(edges.get(m, ())):
            visit(t)
        active.pop()
        done.add(m)

    for m in sorted(edges):
        visit(m)
    assert "kernelgraph.widgets.display" in edges["kernelgraph.widgets.compiler"]
    assert "kernelgraph.widgets.views" in edges["kernelgraph.widgets.document"]
