"""Batched value iteration over many MDPs against a per-MDP loop of the same solver.

Prints, in one run: the time of one batched :func:`expertlab.mdp.value_iteration`
call over ``R`` random Garnet MDPs (``S = 100``, ``A = 5`` by default) and the
time of ``R`` calls on the same MDPs one at a time, their ratio, and the
largest difference between the two answers; then the same for small MDPs
(``S = 10``, ``A = 3``), where the per-call Python overhead dominates.
Last, UCRL-VTR's wall time per episode in the first and in the last block of
a long run (batched over replications on the hard linear-mixture instance):
its ridge statistics are updated by Sherman–Morrison, so the ratio of the two
stays near 1 instead of growing with the episode index.  On a
CPU the large case is bound by memory bandwidth (the batch streams all ``R``
kernels each iteration, while one kernel of 400 kB stays in cache), so the
batch gains little there; it pays for small MDPs and on a GPU.  Nothing is
asserted: the numbers are for the record (JSON with ``--json``).

    python benchmarks/bench_mdp.py [--quick] [--json PATH]
"""

from __future__ import annotations

import argparse
import json
import platform
import time

import numpy as np

from expertlab import sim
from expertlab.mdp import TabularMDP, ucrl_vtr, value_iteration
from expertlab.mdp.instances import garnet, hard_linear_mixture


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--mdps", type=int, default=256)
    p.add_argument("--states", type=int, default=100)
    p.add_argument("--actions", type=int, default=5)
    p.add_argument("--branching", type=int, default=5)
    p.add_argument("--gamma", type=float, default=0.9)
    p.add_argument("--epsilon", type=float, default=1e-6)
    p.add_argument("--quick", action="store_true", help="R = 32, seconds")
    p.add_argument("--json", default=None)
    a = p.parse_args(argv)
    if a.quick:
        a.mdps = 32
    recs = [_one(a.mdps, a.states, a.actions, a.branching, a.gamma, a.epsilon),
            _one(a.mdps, 10, 3, 3, a.gamma, a.epsilon),
            _vtr_episode_time(2000 if a.quick else 20_000, 32)]
    if a.json:
        with open(a.json, "w") as f:
            json.dump(recs, f, indent=2)
    return recs


def _one(n_mdps, n_states, n_actions, branching, gamma, epsilon):
    m = garnet(n_states, n_actions, branching, n_mdps=n_mdps, gamma=gamma, seed=0)

    t0 = time.perf_counter()
    batch = value_iteration(m, epsilon=epsilon)
    t_batch = time.perf_counter() - t0

    t0 = time.perf_counter()
    singles = [value_iteration(TabularMDP(m.transitions[i], m.rewards[i], m.gamma), epsilon=epsilon)
               for i in range(n_mdps)]
    t_loop = time.perf_counter() - t0

    diff = max(float(np.abs(s.values - batch.values[i]).max()) for i, s in enumerate(singles))
    same_iter = all(int(s.n_iter) == int(batch.n_iter[i]) for i, s in enumerate(singles))
    rec = {
        "mdps": n_mdps, "states": n_states, "actions": n_actions, "gamma": gamma, "epsilon": epsilon,
        "batched_s": t_batch, "loop_s": t_loop, "speedup": t_loop / t_batch,
        "max_value_difference": diff, "same_iterations": same_iter,
        "max_iterations": int(batch.n_iter.max()), "python": platform.python_version(),
        "numpy": np.__version__,
    }
    print(f"value iteration, R = {n_mdps} Garnet MDPs (S = {n_states}, A = {n_actions}, gamma = {gamma}): "
          f"batched {t_batch:.3f} s, per-MDP loop {t_loop:.3f} s, speed-up x{t_loop / t_batch:.2f} "
          f"(max |difference| {diff:.1e}, same iteration counts: {same_iter})")
    return rec


def _vtr_episode_time(n_episodes, n_reps, block=200):
    """Wall time per episode of UCRL-VTR in the first and the last ``block`` episodes of one ``sim.run``.

    A probe around the learner's ``act`` stamps the start of every episode;
    an episode's time runs from its stamp to the next (plan, roll-out,
    metrics and update; the last episode is left out).
    """
    m = hard_linear_mixture(2, horizon=5, gap=0.05)
    learner = ucrl_vtr()
    stamps = []

    def act(state, obs, keys):
        stamps.append(time.perf_counter())
        return learner.act(state, obs, keys)

    sim.run(learner._replace(act=act), m, horizon=n_episodes, n_reps=n_reps, seed=0, backend="numpy",
            checkpoints=[n_episodes])
    times = np.diff(np.array(stamps))  # episodes 1 .. K - 1
    first, last = float(np.median(times[:block])), float(np.median(times[-block:]))
    rec = {"learner": "ucrl_vtr", "episodes": n_episodes, "reps": n_reps, "block": block,
           "first_block_s_per_episode": first, "last_block_s_per_episode": last, "ratio_last_first": last / first}
    print(f"UCRL-VTR, R = {n_reps} replications, {n_episodes} episodes (hard instance, d = 4, H = 5): median "
          f"{first * 1e3:.3f} ms per episode over the first {block}, {last * 1e3:.3f} ms over the last {block} "
          f"(ratio {last / first:.2f})")
    return rec


if __name__ == "__main__":
    main()
