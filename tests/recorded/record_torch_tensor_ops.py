"""Record what PyTorch gives for its tensor functions and methods that kernelgraph's
``ops/torch_select.py`` and ``eager/tensor_extras.py`` add (gather, scatter, topk, tril ...),
for tests/test_torch_tensor_ops.py. Run it with a Python that has torch
(tests/recorded/README.md)::

    python tests/recorded/record_torch_tensor_ops.py   # rewrites torch_tensor_ops.json

torch is imported inside ``main()``, so pytest's doctest collection can import this file
without it."""
import json
import warnings
from pathlib import Path

X = [[0.5, -1.25, 3.0, 2.0], [1.5, 4.0, -0.75, 0.25], [2.5, 2.5, -3.0, 1.0]]
W = [[1.0, -2.0, 0.5, 3.0], [0.25, 1.5, -1.0, 2.0], [-0.5, 1.0, 2.0, -1.5]]


def main() -> None:
    import torch

    def t(v, grad=False):
        return torch.tensor(v, dtype=torch.float64, requires_grad=grad)

    def grads(fn, *inputs):
        """The value, the grad_fn name and the gradients of sum(fn(...) * weights)."""
        xs = [t(v, True) for v in inputs]
        out = fn(*xs)
        w = torch.linspace(-1.0, 2.0, out.numel(), dtype=torch.float64).reshape(out.shape)
        (out * w).sum().backward()
        return {"value": out.tolist(), "grad_fn": type(out.grad_fn).__name__,
                "grads": [x.grad.tolist() for x in xs]}

    def error(fn):
        try:
            fn()
        except Exception as e:  # noqa: BLE001 - recorded as type and message
            return {"type": type(e).__name__, "message": str(e).split("\n")[0]}
        return None

    r = {"torch": torch.__version__}
    idx = [[0, 3], [2, 2], [1, 0]]
    r["gather"] = {
        "index": idx,
        "dim1": grads(lambda x: torch.gather(x, 1, torch.tensor(idx)), X),
        "dim0": grads(lambda x: x.gather(0, torch.tensor([[2, 0, 1, 1]])), X),
        "neg": torch.gather(t(X), -1, torch.tensor(idx)).tolist(),
        "out_of_range": error(lambda: torch.gather(t(X), 1, torch.tensor([[4]]))),
        "int": torch.gather(torch.tensor([[1, 2], [3, 4]]), 1,
                            torch.tensor([[0, 0], [1, 0]])).tolist(),
    }
    sidx = [[1, 0, 2, 0], [0, 2, 1, 1]]
    src = [[10.0, 20.0, 30.0, 40.0], [50.0, 60.0, 70.0, 80.0]]
    r["scatter"] = {
        "index": sidx, "src": src,
        "src_dim0": grads(lambda x, s: torch.scatter(x, 0, torch.tensor(sidx), s), X, src),
        "value": grads(lambda x: x.scatter(0, torch.tensor(sidx), 7.5), X),
        "dim1": torch.zeros(2, 5, dtype=torch.float64).scatter(
            1, torch.tensor([[4, 0], [1, 3]]), t([[1.0, 2.0], [3.0, 4.0]])).tolist(),
        "add_": t(X).scatter_(0, torch.tensor(sidx), t(src), reduce="add").tolist(),
        "multiply_": t(X).scatter_(0, torch.tensor(sidx), t(src),
                                   reduce="multiply").tolist(),
        "value_": t(X).scatter_(1, torch.tensor([[3], [0], [1]]), -2.0).tolist(),
        "one_hot": torch.zeros(3, 4).scatter_(1, torch.tensor([[2], [0], [3]]), 1).tolist(),
        "bad_reduce": error(lambda: t(X).scatter_(0, torch.tensor(sidx), t(src),
                                                  reduce="max")),
        "out_of_range": error(lambda: t(X).scatter(0, torch.tensor([[3]]), 1.0)),
    }
    y = [[3.0, 1.0, 4.0, 1.5, 5.0], [9.0, 2.0, 6.0, 5.5, 3.5]]
    v, i = torch.topk(t(y), 3)
    r["topk"] = {
        "input": y,
        "values": v.tolist(), "indices": i.tolist(),
        "smallest": [a.tolist() for a in torch.topk(t(y), 2, largest=False)],
        "dim0": [a.tolist() for a in t(y).topk(1, dim=0)],
        "grad": grads(lambda x: torch.topk(x, 2).values, y),
        "repr": repr(torch.topk(torch.tensor([3.0, 1.0, 2.0]), 2)),
        "type": type(torch.topk(t(y), 1)).__name__,
        "k_too_big": error(lambda: torch.topk(t(y), 6)),
    }
    a = torch.arange(12.0).reshape(3, 4)
    r["views"] = {
        "stride": a.stride(), "t_stride": a.t().stride(),
        "slice_stride": a[1:, ::2].stride(), "slice_offset": a[1:, ::2].storage_offset(),
        "row_offset": a[2].storage_offset(), "offset": a.storage_offset(),
        "stride0": a.stride(0), "stride_neg": a.stride(-1),
        "row_ptr_bytes": a[1].data_ptr() - a.data_ptr(),
        "t_ptr_same": a.t().data_ptr() == a.data_ptr(),
        "get_device": a.get_device(),
        "ravel": a.t().ravel().tolist(), "ravel_shares": a.ravel().data_ptr() == a.data_ptr(),
    }
    b = torch.zeros(2, 3)
    b.unsqueeze_(1)
    c = torch.zeros(2, 1, 3, 1)
    c.squeeze_()
    d = torch.zeros(2, 1, 3)
    d.squeeze_(1)
    e = torch.arange(6.0).reshape(2, 3)
    e.transpose_(0, 1)
    r["inplace_shape"] = {"unsqueeze_": list(b.shape), "squeeze_": list(c.shape),
                          "squeeze_dim": list(d.shape), "transpose_": e.tolist(),
                          "transpose_stride": e.stride()}
    f = torch.arange(6.0)
    f.resize_(2, 2)
    g = torch.arange(6.0).reshape(2, 3)
    g.resize_(3, 2)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        h = torch.arange(6.0).resize(3, 2)
    r["resize"] = {"shrink": f.tolist(), "same": g.tolist(), "resize": h.tolist(),
                   "warning": [str(w.message) for w in caught],
                   "grow_shape": list(torch.arange(2.0).resize_(2, 3).shape),
                   "grow_prefix": torch.arange(2.0).resize_(2, 3).flatten()[:2].tolist(),
                   "leaf": error(lambda: t([1.0, 2.0], True).resize_(1))}
    n = torch.tensor([1, 2], dtype=torch.int32)
    r["new"] = {"shape": list(n.new(2, 3).shape), "dtype": str(n.new(2, 3).dtype),
                "data": n.new([5, 6, 7]).tolist(), "data_dtype": str(n.new([5, 6]).dtype),
                "empty": list(n.new().shape), "size": list(n.new(torch.Size([4])).shape)}
    r["triangles"] = {
        "tril": grads(lambda x: torch.tril(x), X),
        "triu1": grads(lambda x: torch.triu(x, 1), X),
        "tril_neg": torch.tril(t(X), -1).tolist(), "triu_m": t(X).triu(-1).tolist(),
    }
    sq = [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.5]]
    r["trace"] = {"square": grads(lambda x: x.trace(), sq), "wide": grads(torch.trace, X)}
    r["diag"] = {"vec": grads(lambda x: torch.diag(x), [1.0, 2.0, 3.0]),
                 "vec1": torch.diag(t([1.0, 2.0]), 1).tolist(),
                 "mat": grads(lambda x: torch.diag(x), X),
                 "mat_neg": torch.diag(t(X), -1).tolist(), "mat_2": torch.diag(t(X), 2).tolist()}
    r["dist"] = {"p2": grads(lambda x, z: torch.dist(x, z), X, W),
                 "p1": grads(lambda x, z: torch.dist(x, z, 1), X, W),
                 "pinf": torch.dist(t(X), t(W), float("inf")).item(),
                 "p3": torch.dist(t(X), t(W), 3).item()}
    mask = [[True, False, True, False], [False, False, True, True], [True, True, False, False]]
    r["masked_select"] = {"mask": mask,
                          "grad": grads(lambda x: x.masked_select(torch.tensor(mask)), X),
                          "row": torch.masked_select(t(X), torch.tensor([True, False, True,
                                                                         True])).tolist()}
    u = [0.5, -0.25, 0.9]
    r["arc"] = {name: grads(getattr(torch, name), u) for name in ("arccos", "arcsin", "arctan")}
    r["cumprod"] = {"dim1": grads(lambda x: torch.cumprod(x, 1), X),
                    "dim0": grads(lambda x: x.cumprod(0), X)}
    med = [[3.0, 1.0, 4.0, 2.0], [9.0, 2.0, 6.0, 5.0], [0.5, 7.0, 7.0, 1.0]]
    mv, mi = t(med).median(1)
    r["median"] = {"input": med, "all": grads(lambda x: x.median(), med),
                   "values": mv.tolist(), "indices": mi.tolist(),
                   "dim_grad": grads(lambda x: x.median(0).values, med),
                   "dim_type": type(t(med).median(1)).__name__,
                   "keepdim": list(t(med).median(1, keepdim=True).values.shape)}
    q = [3, 1, 2, 3, 1, 5]
    uq, inv, cnt = torch.unique(torch.tensor(q), return_inverse=True, return_counts=True)
    r["unique"] = {"input": q, "values": uq.tolist(), "inverse": inv.tolist(),
                   "counts": cnt.tolist(),
                   "float": torch.tensor([2.5, 1.0, 2.5]).unique().tolist(),
                   "only_inverse": [a.tolist() for a in torch.tensor(q).unique(
                       return_inverse=True)],
                   "matrix_inverse": torch.unique(torch.tensor([[1, 3], [3, 2]]),
                                                  return_inverse=True)[1].tolist()}
    nz = [[0.0, 1.5, 0.0], [2.0, 0.0, -1.0]]
    r["nonzero"] = {"input": nz, "index": torch.tensor(nz).nonzero().tolist(),
                    "tuple": [a.tolist() for a in torch.tensor(nz).nonzero(as_tuple=True)],
                    "vec": torch.nonzero(torch.tensor([0, 3, 0, 4])).tolist(),
                    "dtype": str(torch.tensor(nz).nonzero().dtype)}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r["range"] = {"int": torch.range(1, 4).tolist(), "dtype": str(torch.range(1, 4).dtype),
                      "step": torch.range(0, 1, 0.25).tolist()}
    r["select"] = grads(lambda x: x.select(1, 2), X)
    r["fmod"] = {"f": torch.fmod(torch.tensor([-3.0, -2.5, 2.5, 3.0]), 2).tolist(),
                 "i": torch.fmod(torch.tensor([-7, 7, -3]), torch.tensor([3, -3, 2])).tolist()}
    r["bitwise_and"] = {"i": torch.bitwise_and(torch.tensor([12, 10, -1]),
                                               torch.tensor([10, 6, 5])).tolist(),
                        "b": torch.bitwise_and(torch.tensor([True, False, True]),
                                               torch.tensor([True, True, False])).tolist()}
    gx, gy = torch.meshgrid(torch.tensor([1, 2, 3]), torch.tensor([4, 5]), indexing="ij")
    hx, hy = torch.meshgrid(torch.tensor([1, 2, 3]), torch.tensor([4, 5]), indexing="xy")
    r["meshgrid"] = {"ij": [gx.tolist(), gy.tolist()], "xy": [hx.tolist(), hy.tolist()]}
    base = t(X)
    r["addc"] = {"addcmul_": base.clone().addcmul_(t(W), t(X), value=0.5).tolist(),
                 "addcdiv_": base.clone().addcdiv_(t(X), t(W), value=-2).tolist()}
    r["bincount"] = {"plain": torch.bincount(torch.tensor([1, 1, 3, 0, 1])).tolist(),
                     "minlength": torch.bincount(torch.tensor([1, 2]), minlength=5).tolist(),
                     "weights": torch.bincount(torch.tensor([0, 2, 2]),
                                               weights=t([0.5, 1.0, 2.0])).tolist()}
    r["histc"] = {"plain": torch.histc(torch.tensor([1.0, 2.0, 1.0, 4.0]), bins=4).tolist(),
                  "range": torch.histc(torch.tensor([0.0, 0.5, 1.0, 2.5, 3.0]), bins=3,
                                       min=0, max=3).tolist()}
    rnd = {}
    for key, dtype, args in (("from_to", torch.float32, (0, 10)), ("to", torch.float32, (7,)),
                             ("f32", torch.float32, ()), ("f64", torch.float64, ()),
                             ("i64", torch.int64, ()), ("i32_from_to", torch.int32, (-5, 5))):
        torch.manual_seed(0)
        rnd[key] = torch.zeros(5, dtype=dtype).random_(*args).tolist()
    r["random_"] = rnd
    st = torch.arange(4.0).reshape(2, 2)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        storage = st.t().storage()
    r["storage"] = {"repr": repr(storage), "len": len(storage), "list": storage.tolist(),
                    "item": storage[1], "element_size": storage.element_size(),
                    "same_ptr": storage.data_ptr() == st.data_ptr(),
                    "row_same_ptr": st[1].storage().data_ptr() == st.data_ptr(),
                    "warning": [str(w.message) for w in caught]}
    z = torch.zeros(3, 4)
    r["shape_errors"] = {
        "gather_rank": error(lambda: z.gather(1, torch.tensor([0, 1]))),
        "gather_size": error(lambda: z.gather(0, torch.tensor([[0, 1, 2, 0, 1]]))),
        "scatter_rank": error(lambda: z.scatter(1, torch.tensor([0, 1]), 1.0)),
        "scatter_size": error(lambda: z.scatter(0, torch.tensor([[0, 1, 2, 0, 1]]), 1.0)),
        "scatter_src": error(lambda: z.scatter(0, torch.tensor([[0, 1, 2]]), torch.zeros(1, 2))),
    }
    r["grad_fn"] = {"select": type(t(X, True).select(0, 1).grad_fn).__name__}
    path = Path(__file__).with_name("torch_tensor_ops.json")
    path.write_text(json.dumps(r, indent=1) + "\n")


if __name__ == "__main__":
    main()
