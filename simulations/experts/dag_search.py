"""
Search-and-stop on a DAG: the optimal rate and the optimistic learner
=====================================================================

A hider sits at a node of a DAG (or nowhere); nodes are searched only after
their parents, each search costs, and the searcher may give up and start a
fresh instance at any time.  With the distribution known, the greedy-by-
density order with the best stopping point finds hiders at the optimal
renewal rate r* (brute force over all plans), so found / budget → r*.  With
the distribution unknown, the optimistic learner's regret r* B − found grows
sublinearly in the budget, while searching the greedy order to the end
(never stopping early) loses a constant fraction.
"""

from expertlab import sim
from expertlab.experts import dag_search, random_out_forest, search_dag


def known_rate(s, backend, seed):
    dag = random_out_forest(s["n_nodes"], seed=s["instance_seed"])
    res = dag_search(dag, policy="greedy", budget=s["budget"], n_checkpoints=s["n_checkpoints"],
                     n_reps=s["n_reps"], seed=seed)
    full = dag_search(dag, policy="full", budget=s["budget"], n_checkpoints=s["n_checkpoints"],
                      n_reps=s["n_reps"], seed=seed)
    b = res.budgets
    y = res.found / b[:, None] - res.optimal_rate
    curves = {"full search, never stopping: found / B − r*": (b, full.found.mean(axis=1) / b - res.optimal_rate)}
    return sim.Measurement(x=b, y=y, xlabel="budget B", ylabel="found(B) / B − r* (greedy with optimal stop)",
                           curves=curves, info={"optimal_rate": res.optimal_rate})


def optimistic_regret(s, backend, seed):
    dag = search_dag(s["parents"], s["prob"], s["cost"], name="four-node out-tree")
    kw = dict(budget=s["budget"], n_checkpoints=s["n_checkpoints"], n_reps=s["n_reps"], seed=seed)
    res = dag_search(dag, policy="optimistic", **kw)
    full = dag_search(dag, policy="full", **kw)
    b = res.budgets
    curves = {"greedy order searched to the end (never stopping)": (b, full.regret.mean(axis=1))}
    return sim.Measurement(x=b, y=res.regret, xlabel="budget B", ylabel="regret r* B − found(B)",
                           curves=curves, info={"optimal_rate": res.optimal_rate})


# 0 -> {1, 2}, 2 -> 3: the best plan is {0, 1} (rate 6/17), the second-best set {0, 1, 2} (0.310)
_TREE = dict(parents=[[], [0], [0], [2]], prob=[0.3, 0.3, 0.05, 0.05], cost=[1.0, 1.0, 1.0, 1.0])

EXPERIMENTS = [
    sim.Experiment("experts.dag-known-rate", known_rate,
                   quick=dict(n_nodes=8, instance_seed=3, budget=1e5, n_checkpoints=12, n_reps=1000),
                   full=dict(n_nodes=8, instance_seed=3, budget=1e6, n_checkpoints=20, n_reps=2000),
                   title="Search-and-stop, known distribution: found / budget → r*"),
    sim.Experiment("experts.dag-optimistic-regret", optimistic_regret,
                   quick=dict(_TREE, budget=1e5, n_checkpoints=16, n_reps=200),
                   full=dict(_TREE, budget=1e6, n_checkpoints=25, n_reps=1000),
                   title="Search-and-stop, unknown distribution: regret of the optimistic learner"),
]

if __name__ == "__main__":
    if sim.experiment_main(EXPERIMENTS):
        raise SystemExit(1)
