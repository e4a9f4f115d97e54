"""Batched planning against a per-MDP loop and against pymdptoolbox; UCRL-VTR's cost per episode.

Prints, in one run: the time of one batched :func:`expertlab.mdp.value_iteration`
call over ``R`` random Garnet MDPs (``S = 100``, ``A = 5`` by default) and the
time of ``R`` calls on the same MDPs one at a time, their ratio, and the
largest difference between the two answers; then the same for small MDPs
(``S = 10``, ``A = 3``), where the per-call Python overhead dominates.  On a
CPU the batch is iterated in blocks of MDPs whose kernels fit in a few MiB of
cache, so it no longer streams all ``R`` kernels from memory at every
iteration.

Then UCRL-VTR's cost of an episode early and late in a long run (batched
over replications on the hard linear-mixture instance): its ridge statistics
are updated by Sherman–Morrison, so the ratio stays near 1 instead of
growing with the episode index.  The recorded ratio times the learner's work
(``act`` and ``update``) on the kept arguments of an early and of a late
episode, interleaved; the per-block medians of whole episodes in each of
``--vtr-repeat`` runs (CPU and wall time) are recorded beside it, but the two
blocks run seconds apart, so on a shared machine a change of load moves them.

Last, with pymdptoolbox installed, the batched ``value_iteration`` and
``policy_iteration`` against pymdptoolbox's ``ValueIteration`` and
``PolicyIteration`` called once per MDP, on ``--peer-mdps`` Garnet MDPs:
value iteration with its default sup-norm rule and exact evaluation of the
greedy policy, and like for like with pymdptoolbox (the span rule at the
same ``epsilon``, values and policy only, ``evaluate_policy=False``; with
the default compiled engine and with ``engine="array"``, compiled before the
timings) and with
the span rule and the exact evaluation; policy iteration from action 0 and
warm-started from value iteration (``warm_start=1e-2``).  All are
interleaved ``--repeat`` times and their medians compared (wall and process
CPU time).  The BLAS thread pool is limited to ``--blas-threads``
(1 by default, with threadpoolctl) for every timing: on a loaded machine a
multi-threaded BLAS can spin for seconds on a batched 100 x 100 solve.
Nothing is asserted: the numbers are for the record (JSON with ``--json``).

    python benchmarks/bench_mdp.py [--quick] [--json PATH] [--repeat N] [--blas-threads N]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import platform
import time

import numpy as np

from expertlab import sim
from expertlab.mdp import TabularMDP, policy_iteration, ucrl_vtr, value_iteration
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
    p.add_argument("--peer-mdps", type=int, default=32, help="MDPs of the pymdptoolbox comparison")
    p.add_argument("--repeat", type=int, default=5, help="interleaved repeats of the pymdptoolbox comparison")
    p.add_argument("--vtr-repeat", type=int, default=3, help="UCRL-VTR runs (the ratio is their median)")
    p.add_argument("--blas-threads", type=int, default=1, help="BLAS threads for every timing (0: leave as is)")
    a = p.parse_args(argv)
    if a.quick:
        a.mdps = 32
    with _blas_threads(a.blas_threads):
        recs = [_one(a.mdps, a.states, a.actions, a.branching, a.gamma, a.epsilon),
                _one(a.mdps, 10, 3, 3, a.gamma, a.epsilon),
                _vtr_episode_time(2000 if a.quick else 20_000, 32, repeat=a.vtr_repeat)]
        peer = _against_pymdptoolbox(a.peer_mdps, a.states, a.actions, a.branching, a.gamma, a.epsilon, a.repeat)
        if peer is not None:
            recs.append(peer)
    for rec in recs:
        rec["blas_threads"] = a.blas_threads
    if a.json:
        with open(a.json, "w") as f:
            json.dump(recs, f, indent=2)
    return recs


def _one(n_mdps, n_states, n_actions, branching, gamma, epsilon):
    m = garnet(n_states, n_actions, branching, n_mdps=n_mdps, gamma=gamma, seed=0)
    value_iteration(m, epsilon=epsilon, max_iter=1)  # compiles the compiled engine (or loads it) before timing

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


def _vtr_episode_time(n_episodes, n_reps, block=200, repeat=3, calls=200):
    """UCRL-VTR's cost of an episode early and late in a run of ``n_episodes``, two ways.

    (a) Per run (``repeat`` runs): a probe around the learner's ``act``
    stamps the start of every episode with the thread's CPU time and the wall
    time; an episode runs from its stamp to the next (plan, roll-out, metrics
    and update; the last episode is left out); the ratio of the median over
    the last ``block`` episodes to that over the first ``block``.  The two
    blocks run seconds apart, so a change of the machine's load between them
    moves this ratio.

    (b) Interleaved: the learner's ``act`` and ``update`` arguments of
    episode ``block // 2`` and of episode ``n_episodes - block // 2`` are
    kept, and the learner's work of each episode (``act`` then ``update`` on
    those arguments) is timed alternately ``calls`` times; the ratio of the
    medians (late / early) is the one recorded as ``ratio_last_first``.
    """
    m = hard_linear_mixture(2, horizon=5, gap=0.05)
    learner = ucrl_vtr()
    early, late = block // 2, n_episodes - block // 2
    runs, kept = [], {}
    for _ in range(repeat):
        cpu, wall = [], []

        def act(state, obs, keys):
            cpu.append(time.thread_time())
            wall.append(time.perf_counter())
            if len(cpu) - 1 in (early, late):
                kept[len(cpu) - 1] = [(state, obs, keys)]
            return learner.act(state, obs, keys)

        def update(state, policy, trajectory, keys=None):
            if len(cpu) - 1 in (early, late):
                kept[len(cpu) - 1].append((state, policy, trajectory, keys))
            return learner.update(state, policy, trajectory, keys)

        sim.run(learner._replace(act=act, update=update), m, horizon=n_episodes, n_reps=n_reps, seed=0,
                backend="numpy", checkpoints=[n_episodes])
        run = {}
        for name, stamps in (("cpu", cpu), ("wall", wall)):
            times = np.diff(np.array(stamps))  # episodes 1 .. K - 1
            first, last = float(np.median(times[:block])), float(np.median(times[-block:]))
            run.update({f"{name}_first_s": first, f"{name}_last_s": last, f"{name}_ratio": last / first})
        runs.append(run)

    def episode_work(k):
        (a_args,), u_args = kept[k][:1], kept[k][1]
        learner.act(*a_args)
        learner.update(*u_args)

    timed = {early: [], late: []}
    for _ in range(calls):
        for k in (early, late):
            t0 = time.perf_counter()
            episode_work(k)
            timed[k].append(time.perf_counter() - t0)
    t_early, t_late = float(np.median(timed[early])), float(np.median(timed[late]))
    ratio = t_late / t_early
    run_ratio = float(np.median([r["cpu_ratio"] for r in runs]))
    rec = {"learner": "ucrl_vtr", "episodes": n_episodes, "reps": n_reps, "block": block, "repeat": repeat,
           "runs": runs, "blocks_cpu_ratio_median": run_ratio,
           "blocks_wall_ratio_median": float(np.median([r["wall_ratio"] for r in runs])),
           "interleaved_episodes": [early, late], "interleaved_calls": calls,
           "early_episode_s": t_early, "late_episode_s": t_late, "ratio_last_first": ratio}
    print(f"UCRL-VTR, R = {n_reps} replications, {n_episodes} episodes (hard instance, d = 4, H = 5):\n"
          f"  learner's work of episode {late} / episode {early}, {calls} interleaved calls: {ratio:.3f} "
          f"({t_late * 1e3:.3f} ms / {t_early * 1e3:.3f} ms, medians)\n"
          f"  whole episodes, last {block} / first {block} (CPU time, per run): "
          f"{', '.join(format(r['cpu_ratio'], '.3f') for r in runs)}; wall time: "
          f"{', '.join(format(r['wall_ratio'], '.3f') for r in runs)}")
    return rec


@contextlib.contextmanager
def _blas_threads(n):
    """Limit the BLAS thread pool to ``n`` threads (``0``: leave it) for the timings inside."""
    if n <= 0:
        yield
        return
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        print("threadpoolctl is not installed: the BLAS thread pool is left as it is")
        yield
        return
    with threadpool_limits(limits=n, user_api="blas"):
        yield


def _against_pymdptoolbox(n_mdps, n_states, n_actions, branching, gamma, epsilon, repeat):
    """Batched ``value_iteration``/``policy_iteration`` against pymdptoolbox called once per MDP (``None`` if absent).

    The timings are interleaved ``repeat`` times and their medians compared,
    so a change of the machine's load hits all of them alike.
    pymdptoolbox's ``ValueIteration`` stops on the span of ``V_k - V_{k-1}``
    below ``epsilon (1 - gamma) / gamma`` and returns ``V_{k+1}`` and its
    greedy policy: ``value_iteration(..., stop="span",
    evaluate_policy=False)`` is the like-for-like call (same rule, same
    ``epsilon``, no exact evaluation of the policy; it returns MacQueen's
    midpoint rather than ``V_{k+1}``).  The default ``value_iteration`` (sup
    norm rule, a linear solve per MDP for the policy's exact value) is timed
    too.  The answers are compared with policy iteration's exact ones.
    """
    try:
        import mdptoolbox.mdp as toolbox
    except ImportError:
        print("pymdptoolbox is not installed: no peer comparison")
        return None
    m = garnet(n_states, n_actions, branching, n_mdps=n_mdps, gamma=gamma, seed=0)
    peer_p = [np.ascontiguousarray(np.transpose(m.transitions[i], (1, 0, 2))) for i in range(n_mdps)]

    def peer(cls, **kw):
        out = []
        for i in range(n_mdps):
            solver = cls(peer_p[i], m.rewards[i], gamma, **kw)
            solver.run()
            out.append(solver)
        return out

    runs = {"vi": lambda: value_iteration(m, epsilon=epsilon),
            "vi_span": lambda: value_iteration(m, epsilon=epsilon, stop="span", evaluate_policy=False),
            "vi_span_array": lambda: value_iteration(m, epsilon=epsilon, stop="span", evaluate_policy=False,
                                                     engine="array"),
            "vi_span_evaluated": lambda: value_iteration(m, epsilon=epsilon, stop="span"),
            "pi": lambda: policy_iteration(m), "pi_warm": lambda: policy_iteration(m, warm_start=1e-2),
            "peer_vi": lambda: peer(toolbox.ValueIteration, epsilon=epsilon),
            "peer_pi": lambda: peer(toolbox.PolicyIteration)}
    value_iteration(m, epsilon=epsilon, max_iter=1)  # compiles the compiled engine (or loads it) before timing
    times = {k: [] for k in runs}
    cpu_times = {k: [] for k in runs}
    out = {}
    for _ in range(repeat):
        for k, f in runs.items():
            t0, c0 = time.perf_counter(), time.process_time()
            out[k] = f()
            times[k].append(time.perf_counter() - t0)
            cpu_times[k].append(time.process_time() - c0)
    med = {k: float(np.median(v)) for k, v in times.items()}
    cpu = {k: float(np.median(v)) for k, v in cpu_times.items()}
    peer_vi, peer_pi, pi = out["peer_vi"], out["peer_pi"], out["pi"]
    v_star = pi.values
    peer_v = np.array([np.array(s.V) for s in peer_vi])
    rec = {"peer": "pymdptoolbox", "mdps": n_mdps, "states": n_states, "actions": n_actions, "gamma": gamma,
           "epsilon": epsilon, "repeat": repeat, "times_s": times, "median_s": med, "cpu_times_s": cpu_times,
           "median_cpu_s": cpu}
    for k in ("vi", "vi_span", "vi_span_array", "vi_span_evaluated"):
        rec[f"{k}_speedup"] = med["peer_vi"] / med[k]
        rec[f"{k}_cpu_speedup"] = cpu["peer_vi"] / cpu[k]
        rec[f"{k}_iterations"] = int(out[k].n_iter.sum())
        rec[f"{k}_same_policies_as_peer"] = all(np.array_equal(np.array(s.policy), out[k].policy[i])
                                                for i, s in enumerate(peer_vi))
        rec[f"{k}_max_error"] = float(np.abs(out[k].values - v_star).max())
    for k in ("pi", "pi_warm"):
        rec[f"{k}_speedup"] = med["peer_pi"] / med[k]
        rec[f"{k}_cpu_speedup"] = cpu["peer_pi"] / cpu[k]
        rec[f"{k}_iterations"] = int(out[k].n_iter.sum())
        rec[f"{k}_same_policies_as_peer"] = all(np.array_equal(np.array(s.policy), out[k].policy[i])
                                                for i, s in enumerate(peer_pi))
        rec[f"{k}_max_value_difference"] = max(float(np.abs(np.array(s.V) - out[k].values[i]).max())
                                               for i, s in enumerate(peer_pi))
    rec["peer_vi_iterations"] = sum(int(s.iter) for s in peer_vi)
    rec["peer_vi_max_error"] = float(np.abs(peer_v - v_star).max())
    rec["vi_span_same_iterations_as_peer"] = [int(s.iter) for s in peer_vi] == out["vi_span"].n_iter.tolist()
    rec["vi_span_engines_max_value_difference"] = float(np.abs(out["vi_span"].values
                                                               - out["vi_span_array"].values).max())
    rec["vi_span_engines_same_iterations"] = out["vi_span"].n_iter.tolist() == out["vi_span_array"].n_iter.tolist()
    print(f"against pymdptoolbox, {n_mdps} Garnet MDPs (S = {n_states}, A = {n_actions}, gamma = {gamma}), medians "
          f"of {repeat} interleaved runs (wall; CPU time in brackets), speed-up = pymdptoolbox / ours:")
    print(f"  pymdptoolbox ValueIteration (epsilon = {epsilon:g}, span rule): {med['peer_vi'] * 1e3:.1f} ms "
          f"({cpu['peer_vi'] * 1e3:.1f} ms); {rec['peer_vi_iterations']} iterations; max |V - V*| "
          f"{rec['peer_vi_max_error']:.1e}")
    for k, what in (("vi_span", "span rule, evaluate_policy=False (like for like)"),
                    ("vi_span_array", "the same, engine='array'"),
                    ("vi_span_evaluated", "span rule, exact evaluation of the policy"),
                    ("vi", "sup-norm rule (default), exact evaluation of the policy")):
        print(f"  value_iteration, {what}: {med[k] * 1e3:.1f} ms ({cpu[k] * 1e3:.1f} ms), x{rec[f'{k}_speedup']:.2f} "
              f"(CPU x{rec[f'{k}_cpu_speedup']:.2f}); {rec[f'{k}_iterations']} iterations; max |V - V*| "
              f"{rec[f'{k}_max_error']:.1e}; same policies: {rec[f'{k}_same_policies_as_peer']}")
    print(f"  compiled and array engines (span rule): same iterations: {rec['vi_span_engines_same_iterations']}; "
          f"max |value difference| {rec['vi_span_engines_max_value_difference']:.1e}")
    print(f"  pymdptoolbox PolicyIteration: {med['peer_pi'] * 1e3:.1f} ms ({cpu['peer_pi'] * 1e3:.1f} ms)")
    for k, what in (("pi", "from action 0 (default)"), ("pi_warm", "warm_start=1e-2")):
        print(f"  policy_iteration, {what}: {med[k] * 1e3:.1f} ms ({cpu[k] * 1e3:.1f} ms), x{rec[f'{k}_speedup']:.2f} "
              f"(CPU x{rec[f'{k}_cpu_speedup']:.2f}); {rec[f'{k}_iterations']} iterations; max |value difference| "
              f"{rec[f'{k}_max_value_difference']:.1e}; same policies: {rec[f'{k}_same_policies_as_peer']}")
    return rec


if __name__ == "__main__":
    main()
