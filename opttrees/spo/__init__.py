"""SPO trees: loss, greedy SPOT, pruning, forests (the SPOT paper, Elmachtoub et al. 2020)."""
from .forest import fit_forest, forest_mean_cost
from .greedy import grow_spo_tree
from .loss import decision_regret, normalized_extra_cost, normalized_spo_loss, spo_loss
from .pruning import collapse, node_loss_on, prune_on_validation, prune_zero_gain, pruning_path, refit_nodes

__all__ = ["fit_forest", "forest_mean_cost", "grow_spo_tree", "decision_regret", "normalized_extra_cost",
           "normalized_spo_loss", "spo_loss", "collapse", "node_loss_on", "prune_on_validation",
           "prune_zero_gain", "pruning_path", "refit_nodes"]
