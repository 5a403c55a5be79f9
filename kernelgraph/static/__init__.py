"""Static mode: build a graph, then run it in a Session (TensorFlow 1's model)."""
