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
(never stopping early) loses a constant fraction, and so does the same
learner without its confidence bonus (plug-in estimates).
"""

from expertlab import sim
from expertlab.experts import dag_greedy, dag_optimistic, random_out_forest, search_dag, search_stream


def _by_budget(learner, env, s, backend, seed):
    """``final["found_by_budget"]`` and ``final["regret_by_budget"]`` as (n_budgets, n_reps) arrays."""
    res = sim.run(learner, env, horizon=env.max_instances, n_reps=s["n_reps"], seed=seed, backend=backend,
                  metrics=["found_within_budget"])
    if not res.final["stopped"].all():
        raise RuntimeError("a replication did not spend its budget within env.max_instances instances")
    return res.final["found_by_budget"].T, res.final["regret_by_budget"].T


def known_rate(s, backend, seed):
    env = search_stream(random_out_forest(s["n_nodes"], seed=s["instance_seed"]), s["budget"], s["n_checkpoints"])
    found, _ = _by_budget(dag_greedy(stop=s.get("stop", True)), env, s, backend, seed)
    full, _ = _by_budget(dag_greedy(stop=False), env, s, backend, seed)
    b, r_star = env.budgets, env.optimal_rate
    y = found / b[:, None] - r_star
    curves = {"full search, never stopping: found / B − r*": (b, full.mean(axis=1) / b - r_star)}
    return sim.Measurement(x=b, y=y, xlabel="budget B", ylabel="found(B) / B − r* (greedy with optimal stop)",
                           curves=curves, info={"optimal_rate": r_star})


def optimistic_regret(s, backend, seed):
    dag = search_dag(s["parents"], s["prob"], s["cost"], name="four-node out-tree")
    env = search_stream(dag, s["budget"], s["n_checkpoints"])
    _, regret = _by_budget(dag_optimistic(**s.get("learner_params", {})), env, s, backend, seed)
    b = env.budgets
    curves = {}
    if s.get("baseline", True):
        _, full = _by_budget(dag_greedy(stop=False), env, s, backend, seed)
        curves["greedy order searched to the end (never stopping)"] = (b, full.mean(axis=1))
    return sim.Measurement(x=b, y=regret, xlabel="budget B", ylabel="regret r* B − found(B)",
                           curves=curves, info={"optimal_rate": env.optimal_rate})


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
    sim.Experiment("experts.dag-plugin-linear", optimistic_regret,
                   quick=dict(_TREE, budget=1e5, n_checkpoints=16, n_reps=100, learner_params={"bonus": 1e-9},
                              baseline=False),
                   full=dict(_TREE, budget=1e6, n_checkpoints=25, n_reps=1000, learner_params={"bonus": 1e-9}),
                   title="Search-and-stop, unknown distribution: the plug-in learner's regret is linear"),
]

if __name__ == "__main__":
    if sim.experiment_main(EXPERIMENTS):
        raise SystemExit(1)
