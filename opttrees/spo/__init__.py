"""SPO trees: loss, greedy SPOT, pruning, forests (the SPOT paper, Elmachtoub et al. 2020).

The SPOT objective (greedy pruning, MILP, estimators): training normalised SPO loss + alpha · splits, see
:mod:`opttrees.spo.objective`.
"""
from .forest import fit_forest, forest_mean_cost
from .greedy import grow_spo_tree
from .loss import decision_regret, normalized_extra_cost, normalized_spo_loss, spo_loss
from .objective import alpha_from_paper, alpha_to_paper, objective_value, spot_norm, spot_objective, tree_regret
from .pruning import (collapse, node_loss_on, prune_alpha, prune_on_validation, prune_zero_gain, pruning_path,
                      refit_nodes, stored_objective)

__all__ = ["fit_forest", "forest_mean_cost", "grow_spo_tree", "decision_regret", "normalized_extra_cost",
           "normalized_spo_loss", "spo_loss", "alpha_from_paper", "alpha_to_paper", "objective_value",
           "spot_norm", "spot_objective", "tree_regret", "collapse", "node_loss_on", "prune_alpha",
           "prune_on_validation", "prune_zero_gain", "pruning_path", "refit_nodes", "stored_objective"]
