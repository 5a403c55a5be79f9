"""``torch.distributed.checkpoint.default_planner``: the planners ``save`` and ``load``
take. kernelgraph's checkpoints hold whole tensors in one file, so there is nothing to plan:
these are the defaults that ``planner=`` accepts and that change nothing, as PyTorch's
defaults change nothing for unsharded tensors."""

from __future__ import annotations

__all__ = ["DefaultLoadPlanner", "DefaultSavePlanner"]


class DefaultSavePlanner:
    """PyTorch's default save planner; ``flatten_state_dict`` and ``dedup_replicated_tensors``
    are accepted and change nothing here (a nested dict is saved with its layout)."""

    def __init__(self, flatten_state_dict: bool = True, flatten_sharded_tensors: bool = True,
                 dedup_replicated_tensors=None, dedup_save_to_lowest_rank: bool = False,
                 enable_plan_caching: bool = False):
        self.flatten_state_dict = flatten_state_dict
        self.flatten_sharded_tensors = flatten_sharded_tensors


class DefaultLoadPlanner:
    """PyTorch's default load planner: loads each tensor in place."""

    def __init__(self, flatten_state_dict: bool = True, flatten_sharded_tensors: bool = True,
                 allow_partial_load: bool = False):
        if allow_partial_load:
            raise ValueError("kernelgraph's DefaultLoadPlanner takes allow_partial_load=False "
                             "only: a key missing from the checkpoint raises")
        self.flatten_state_dict = flatten_state_dict
        self.flatten_sharded_tensors = flatten_sharded_tensors
