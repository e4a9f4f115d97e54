"""
Conservative exploration: StepMix, EpsMix and the cumulative constraint never fall below the baseline
=====================================================================================================

StepMix and EpsMix (Li, Huang, Shen & Yang 2023) and the cumulative-constraint
rule of Garcelon et al. (2020) wrap the optimistic policy of UCBVI and a known
baseline on a small Garnet kernel.  Every played (mixed) policy is evaluated
exactly with the true model: the claims are that runs without a violation of
the constraint are at least :math:`1 - \\delta` of all runs, that the expected
regret grows at most like :math:`\\sqrt K`, and that the mass of baseline play
(which bounds the gap to the unconstrained optimistic learner) grows at most
logarithmically in :math:`K`.  With a baseline learned from offline episodes
(behaviour cloning and the lower end of a Hoeffding interval on its value)
StepMix still never falls below the true baseline's level.  The
unconstrained UCBVI regret is drawn alongside in the full runs.  StepMix and
EpsMix attain the :math:`\\sqrt K` rate on the lower-bound construction (a gap
:math:`c/\\sqrt K` between the actions, rebuilt for each :math:`K`).
"""

import functools
import math

import numpy as np

from expertlab import mdp, sim


def _instance(s):
    return mdp.conservative_garnet(s["n_states"], s["n_actions"], s["branching"], s["horizon"],
                                   seed=s["instance_seed"], alpha=s["alpha"])


def _learner(rule, s):
    n_t = s["n_episodes"] * s["horizon"]
    scale = 1.0 / (7.0 * math.log(5.0 * s["n_states"] * s["n_actions"] * n_t / 0.1))  # bonus H / sqrt(n)
    kw = dict(delta=0.1, bonus="hoeffding", bonus_scale=scale, stationary=True,
              pessimism_scale=s.get("pessimism_scale", 1.0))
    if rule in ("stepmix", "epsmix"):
        return getattr(mdp, rule)(**kw)
    return mdp.conservative_ucbvi(rule, **kw)


def _checkpoints(s):
    return np.unique(np.geomspace(10, s["n_episodes"], 14).round().astype(np.int64))


@functools.lru_cache(maxsize=8)
def _run(rule, items, seed, backend):
    s = dict(items)
    env = _instance(s)
    res = sim.run(_learner(rule, s), env, horizon=s["n_episodes"], n_reps=s["n_reps"], seed=seed, backend=backend,
                  checkpoints=_checkpoints(s))
    return res, env


def _measure(s, seed, backend, what):
    rule = s["rule"]
    items = tuple(sorted((k, v) for k, v in s.items() if k not in ("rule", "reference")))
    res, env = _run(rule, items, seed, backend)
    x = res.checkpoints.astype(float)
    curves = {}
    if s.get("reference"):
        ref, _ = _run("unconstrained", items, seed, backend)
        curves["UCBVI (unconstrained) regret"] = (x, ref.mean("regret"))
    info = {"wall_time": res.wall_time, "backend": res.backend, "optimal_value": env.optimal_value(),
            "baseline_value": env.baseline_value,
            "episode_violations_max": int(res.metric("violations").max()),
            "cumulative_violations_max": int(res.metric("cumulative_violations").max())}
    if what == "regret":
        curves["realised regret"] = (x, res.mean("realised_regret"))
        return sim.Measurement(x=x, y=res.metric("regret"), xlabel="episodes K", ylabel="expected regret",
                               curves=curves, info=info)
    if what == "mass":
        curves["expected regret"] = (x, res.mean("regret"))
        return sim.Measurement(x=x, y=res.metric("conservative_mass"), xlabel="episodes K",
                               ylabel="conservative mass sum (1 - eps_k w_k)", curves=curves, info=info)
    count = res.metric("violations" if what == "episode" else "cumulative_violations")
    ok = (count == 0).astype(float)
    return sim.Measurement(x=x, y=ok, xlabel="episodes K", ylabel="run without violation so far", info=info)


@functools.lru_cache(maxsize=4)
def _run_learned(items, seed, backend):
    s = dict(items)
    known = _instance(s)
    behaviour = np.asarray(known.baseline.policy).argmax(axis=-1)  # the known baseline is deterministic
    learned = mdp.learned_baseline(known.model, behaviour, s["n_offline"], delta=0.05, seed=seed + 1)
    v_b = float(known.baseline.value)
    env = mdp.conservative(known.model, learned, alpha=s["alpha"], baseline_value=v_b)
    res = sim.run(_learner(s.get("rule", "stepmix"), s), env, horizon=s["n_episodes"], n_reps=s["n_reps"],
                  seed=seed, backend=backend, checkpoints=_checkpoints(s))
    return res, learned, v_b


def learned_baseline_free(s, backend, seed):
    items = tuple(sorted(s.items()))
    res, learned, v_b = _run_learned(items, seed, backend)
    covered = bool(learned.value <= v_b <= learned.reference)
    if not covered:
        raise RuntimeError(f"the offline interval [{learned.value:.4f}, {learned.reference:.4f}] misses the baseline "
                           f"value {v_b:.4f}: the claim's conditioning event failed for this seed")
    x = res.checkpoints.astype(float)
    violations = res.metric("violations")
    return sim.Measurement(x=x, y=(violations == 0).astype(float), xlabel="episodes K",
                           ylabel="run without violation so far (learned baseline)",
                           curves={"expected regret / 1000": (x, res.mean("regret") / 1000.0)},
                           info={"offline_interval": [learned.value, learned.reference], "baseline_value": v_b,
                                 "episode_violations_max": int(violations.max()), "wall_time": res.wall_time,
                                 "backend": res.backend})


def violations_free(s, backend, seed):
    return _measure(s, seed, backend, "episode")


def cumulative_free(s, backend, seed):
    return _measure(s, seed, backend, "cumulative")


def regret(s, backend, seed):
    return _measure(s, seed, backend, "regret")


def conservative_mass(s, backend, seed):
    return _measure(s, seed, backend, "mass")


def minimax_regret(s, backend, seed):
    """Regret of the episodes K/5 .. K on the two-point construction with gap c / sqrt(K), uniform baseline."""
    ks = np.asarray(s["episodes"], dtype=np.int64)
    y = []
    for k in ks:
        m = mdp.instances.two_point_lower_bound(s["gap_constant"] / math.sqrt(k), s["n_actions"], s["horizon"])
        uniform = np.full((m.horizon, m.n_states, m.n_actions), 1.0 / m.n_actions)
        env = mdp.conservative(m, mdp.known_baseline(m, uniform), alpha=s["alpha"])
        res = sim.run(_learner(s["rule"], dict(s, n_episodes=int(k), n_states=3)), env, horizon=int(k),
                      n_reps=s["n_reps"], seed=seed, backend=backend, checkpoints=np.array([k // 5, k]))
        y.append(res.metric("regret")[1] - res.metric("regret")[0])
    x = ks.astype(float)
    y = np.stack(y)
    worst = 0.8 * s["gap_constant"] * np.sqrt(x) * (s["horizon"] - 1)  # every episode with a wrong action
    return sim.Measurement(x=x, y=y, xlabel="episodes K (gap c / sqrt(K))",
                           ylabel="expected regret of episodes K/5 .. K",
                           curves={"(H - 1) eps_K (0.8 K) (always wrong)": (x, worst),
                                   "the same times 1 - 1/A (uniform play)": (x, worst * (1.0 - 1.0 / s["n_actions"]))},
                           info={"fraction_of_wrong_episodes": (y.mean(axis=1) / worst).tolist()})


_SIZE = dict(n_states=3, n_actions=2, branching=3, horizon=3, instance_seed=2, alpha=0.3)
_STEP_Q = dict(_SIZE, rule="stepmix", n_episodes=10_000, n_reps=32)
_STEP_F = dict(_SIZE, rule="stepmix", n_episodes=100_000, n_reps=64, reference=True)
_EPS_Q = dict(_SIZE, rule="epsmix", n_episodes=3_000, n_reps=32)
_EPS_F = dict(_SIZE, rule="epsmix", n_episodes=30_000, n_reps=64, reference=True)
_CUM_Q = dict(_SIZE, rule="cumulative", n_episodes=3_000, n_reps=32)
_MINIMAX_Q = dict(rule="epsmix", n_actions=4, horizon=3, alpha=0.3, gap_constant=0.1,
                  episodes=(125, 250, 500, 1000), n_reps=16)
_MINIMAX_F = dict(_MINIMAX_Q, episodes=(1000, 3000, 10_000, 30_000), n_reps=64)
_CUM_F = dict(_SIZE, rule="cumulative", n_episodes=30_000, n_reps=64, reference=True)

EXPERIMENTS = [
    sim.Experiment("mdp.stepmix-zero-violations", violations_free, quick=_STEP_Q, full=_STEP_F,
                   title="StepMix: no episode-wise violation in >= 1 - delta of runs"),
    sim.Experiment("mdp.stepmix-regret-vs-K", regret, quick=_STEP_Q, full=_STEP_F,
                   title="StepMix: expected regret = O(sqrt K)"),
    sim.Experiment("mdp.stepmix-conservative-cost-vs-K", conservative_mass, quick=_STEP_Q, full=_STEP_F,
                   title="StepMix: baseline mass = O(log K)"),
    sim.Experiment("mdp.epsmix-zero-violations", violations_free, quick=_EPS_Q, full=_EPS_F,
                   title="EpsMix: no episode-wise violation in >= 1 - delta of runs"),
    sim.Experiment("mdp.epsmix-regret-vs-K", regret, quick=_EPS_Q, full=_EPS_F,
                   title="EpsMix: expected regret = O(sqrt K)"),
    sim.Experiment("mdp.epsmix-conservative-cost-vs-K", conservative_mass, quick=_EPS_Q, full=_EPS_F,
                   title="EpsMix: expected number of baseline episodes = O(log K)"),
    sim.Experiment("mdp.stepmix-learned-baseline-zero-violations", learned_baseline_free,
                   quick=dict(_SIZE, n_episodes=3_000, n_reps=32, n_offline=2000),
                   full=dict(_SIZE, n_episodes=30_000, n_reps=64, n_offline=2000),
                   title="StepMix with a baseline learned offline: no violation in >= 1 - delta of runs"),
    sim.Experiment("mdp.stepmix-minimax-regret-vs-K", minimax_regret,
                   quick=dict(_MINIMAX_Q, rule="stepmix", alpha=0.9, episodes=(250, 500, 1000, 2000)),
                   full=dict(_MINIMAX_F, rule="stepmix", alpha=0.9, episodes=(1000, 2000, 5000, 10_000)),
                   title="StepMix on the lower-bound construction: expected regret ∝ sqrt K"),
    sim.Experiment("mdp.epsmix-minimax-regret-vs-K", minimax_regret, quick=_MINIMAX_Q, full=_MINIMAX_F,
                   title="EpsMix on the lower-bound construction: expected regret ∝ sqrt K"),
    sim.Experiment("mdp.cumulative-zero-violations", cumulative_free, quick=_CUM_Q, full=_CUM_F,
                   title="Cumulative constraint: no violation in >= 1 - delta of runs"),
]

if __name__ == "__main__":
    if sim.experiment_main(EXPERIMENTS):
        raise SystemExit(1)
