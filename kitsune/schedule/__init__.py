"""The schedule layer: templates chosen from comprehension roles, configs, occupancy and the tuning database.

* ``roles``: roles of an anchor comprehension's index variables (M/N/K/batch/window/gather/scatter);
* ``configs``: per template a frozen config dataclass (search space, resource model, cost estimate);
* ``occupancy``: the one occupancy function (CTAs per SM from registers / shared memory / warps);
* ``select``: a task's template, config and tile;
* ``depthwise``: the depthwise form of a window contraction (one input row band an output);
* ``db``: the tuning database (``kitsune-tune`` writes it, ``kitsune-choose-schedules`` reads it).
"""
