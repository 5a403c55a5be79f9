"""``python -m kernelgraph.demo``: the classic c = a * b example, built both ways.

Until the notebooks arrive this is the tutorial: it builds the same computation as a static
graph (TF1 style) and as an eager computation (PyTorch style), shows that both give
c = 300, dc/da = 20 and dc/db = 15, and prints the code the Session generated for the run.
"""

from __future__ import annotations

import kernelgraph as kg


def static_mode() -> dict:
    graph = kg.Graph()
    with graph.as_default():
        a = kg.placeholder(kg.float32, name="a")
        b = kg.placeholder(kg.float32, name="b")
        c = kg.multiply(a, b, name="c")
        da, db = kg.gradients(c, [a, b])
        with kg.Session() as sess:
            feed = {a: 15.0, b: 20.0}
            c_val, (da_val, db_val) = sess.run([c, [da, db]], feed_dict=feed)
            source = sess.plan([c, [da, db]], feed).source
    return {"c": float(c_val), "dc/da": float(da_val), "dc/db": float(db_val),
            "nodes": [f"{n.name} ({n.op.name})" for n in graph.nodes], "plan": source}


def eager_mode() -> dict:
    a = kg.tensor(15.0, requires_grad=True)
    b = kg.tensor(20.0, requires_grad=True)
    c = a * b
    c.backward()
    return {"c": c.item(), "dc/da": a.grad.item(), "dc/db": b.grad.item()}


def main() -> None:
    s, e = static_mode(), eager_mode()
    print("Static mode (declare, then Session.run with feed_dict):")
    print(f"  graph nodes: {', '.join(s['nodes'])}")
    print(f"  c = {s['c']:g}   dc/da = {s['dc/da']:g}   dc/db = {s['dc/db']:g}")
    print("  the plan Session.run compiled (one line per node):")
    print("    " + s["plan"].replace("\n", "\n    ").rstrip())
    print("Eager mode (compute as you go, then backward):")
    print(f"  c = {e['c']:g}   a.grad = {e['dc/da']:g}   b.grad = {e['dc/db']:g}")
    same = all(s[k] == e[k] for k in ("c", "dc/da", "dc/db"))
    print(f"Both modes agree: {same}")


if __name__ == "__main__":
    main()
