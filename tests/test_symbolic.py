"""``Node.symbolic``: a static graph's node says True, a node eager mode recorded
(:class:`kg.EagerNode`) False, so that code on any floor tells the two apart by asking the
node, never by the name of its class (tests/test_structure.py). Each place that asks is
checked here with an eager node or tensor where a graph node belongs."""

import pytest

import kernelgraph as kg
import kernelgraph.compat.v1 as tf
from kernelgraph.graph import Node


def eager_node():
    return (kg.ones(2, requires_grad=True) * 2).grad_fn


def test_a_graph_node_is_symbolic_and_an_eager_node_is_not():
    with kg.Graph().as_default():
        x = kg.placeholder(kg.float32, shape=[2])
        assert isinstance(x, Node) and x.symbolic is True
        assert (x * 2).symbolic is True
    node = eager_node()
    assert isinstance(node, Node) and node.symbolic is False


def test_a_session_refuses_an_eager_node_as_a_fetch_and_a_feed():
    with kg.Graph().as_default():
        x = kg.placeholder(kg.float32, shape=[2])
        with kg.Session() as sess:
            with pytest.raises(TypeError, match="Fetch argument .* has invalid type"):
                sess.run(eager_node())
            with pytest.raises(TypeError, match="Cannot interpret feed_dict key as Tensor"):
                sess.run(x, feed_dict={eager_node(): [1.0, 2.0]})


def test_tf1_optimizers_need_a_graph_loss():
    with pytest.raises(TypeError, match="compute_gradients needs a graph tensor loss, got "
                                        "EagerNode"):
        tf.train.GradientDescentOptimizer(0.1).compute_gradients(eager_node())


def test_graph_ops_refuse_eager_tensors():
    with kg.Graph().as_default():
        x = kg.placeholder(kg.float32, shape=[2])
        with pytest.raises(TypeError, match="cannot use an eager tensor in graph op 'add'"):
            kg.ops.add(x, kg.ones(2))
        with pytest.raises(TypeError, match="x.to\\(device\\) on a graph node"):
            x.to(kg.device("cpu"))
        with pytest.raises(TypeError, match="returned an eager tensor as value 0"):
            kg.cond(x[0] > 0, lambda: kg.ones(2), lambda: x)
        with pytest.raises(TypeError, match="loop variable 1 is an eager tensor"):
            kg.while_loop(lambda i, v: i < 3, lambda i, v: (i + 1, v), [x[0], kg.ones(2)])


def test_data_parallel_refuses_an_eager_tensor_beside_a_graph_input():
    model = kg.nn.Linear(3, 2)
    with kg.Graph().as_default():
        x = kg.placeholder(kg.float32, shape=[4, 3])
        with pytest.raises(TypeError, match="DataParallel runs in static mode"):
            kg.distributed.DataParallel(model, ["cpu", "cpu"])(x, kg.ones(4, 3))
