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
unconstrained UCBVI regret is drawn alongside in the full runs.
"""

import functools
import math

import numpy as np

from expertlab import mdp, sim


def _instance(s):
    return mdp.conservative_garnet(s["n_states"], s["n_actions"], s["branching"], s["horizon"],
                                   seed=s["instance_seed"])


def _learner(rule, s, baseline):
    n_t = s["n_episodes"] * s["horizon"]
    scale = 1.0 / (7.0 * math.log(5.0 * s["n_states"] * s["n_actions"] * n_t / 0.1))  # bonus H / sqrt(n)
    return mdp.conservative_ucbvi(baseline, rule, alpha=s["alpha"], delta=0.1, bonus="hoeffding",
                                  bonus_scale=scale, stationary=True)


@functools.lru_cache(maxsize=8)
def _run(rule, items, seed):
    s = dict(items)
    m, b = _instance(s)
    ck = np.unique(np.geomspace(10, s["n_episodes"], 14).round().astype(np.int64))
    return mdp.run_conservative(_learner(rule, s, b), m, s["n_episodes"], s["n_reps"], seed=seed, checkpoints=ck)


def _measure(s, seed, what):
    rule = s["rule"]
    items = tuple(sorted((k, v) for k, v in s.items() if k not in ("rule", "reference")))
    res = _run(rule, items, seed)
    x = res.checkpoints.astype(float)
    curves = {}
    if s.get("reference"):
        ref = _run("unconstrained", items, seed)
        curves["UCBVI (unconstrained) regret"] = (x, ref.mean_regret)
    info = {"wall_time": res.wall_time, "optimal_value": res.optimal_value, "baseline_value": res.baseline_value,
            "episode_violations_max": int(res.violations.max()),
            "cumulative_violations_max": int(res.cumulative_violations.max())}
    if what == "regret":
        curves["realised regret"] = (x, res.mean_realised_regret)
        return sim.Measurement(x=x, y=res.regret, xlabel="episodes K", ylabel="expected regret", curves=curves,
                               info=info)
    if what == "mass":
        curves["expected regret"] = (x, res.mean_regret)
        return sim.Measurement(x=x, y=res.conservative_mass, xlabel="episodes K",
                               ylabel="conservative mass sum (1 - eps_k w_k)", curves=curves, info=info)
    count = res.violations if what == "episode" else res.cumulative_violations
    ok = (count == 0).astype(float)
    return sim.Measurement(x=x, y=ok, xlabel="episodes K", ylabel="run without violation so far", info=info)


@functools.lru_cache(maxsize=4)
def _run_learned(items, seed):
    s = dict(items)
    m, b = _instance(s)
    behaviour = np.asarray(b.policy).argmax(axis=-1)  # the known baseline is deterministic
    learned = mdp.learned_baseline(m, behaviour, s["n_offline"], delta=0.05, seed=seed + 1)
    ck = np.unique(np.geomspace(10, s["n_episodes"], 14).round().astype(np.int64))
    res = mdp.run_conservative(_learner("stepmix", s, learned), m, s["n_episodes"], s["n_reps"], seed=seed,
                               checkpoints=ck, baseline_value=float(b.value))
    return res, learned, float(b.value)


def learned_baseline_free(s, backend, seed):
    items = tuple(sorted((k, v) for k, v in s.items() if k != "rule"))
    res, learned, v_b = _run_learned(items, seed)
    covered = bool(learned.value <= v_b <= learned.reference)
    if not covered:
        raise RuntimeError(f"the offline interval [{learned.value:.4f}, {learned.reference:.4f}] misses the baseline "
                           f"value {v_b:.4f}: the claim's conditioning event failed for this seed")
    x = res.checkpoints.astype(float)
    return sim.Measurement(x=x, y=(res.violations == 0).astype(float), xlabel="episodes K",
                           ylabel="run without violation so far (learned baseline)",
                           curves={"expected regret / 1000": (x, res.mean_regret / 1000.0)},
                           info={"offline_interval": [learned.value, learned.reference], "baseline_value": v_b,
                                 "episode_violations_max": int(res.violations.max()), "wall_time": res.wall_time})


def violations_free(s, backend, seed):
    return _measure(s, seed, "episode")


def cumulative_free(s, backend, seed):
    return _measure(s, seed, "cumulative")


def regret(s, backend, seed):
    return _measure(s, seed, "regret")


def conservative_mass(s, backend, seed):
    return _measure(s, seed, "mass")


_SIZE = dict(n_states=3, n_actions=2, branching=3, horizon=3, instance_seed=2, alpha=0.3)
_STEP_Q = dict(_SIZE, rule="stepmix", n_episodes=10_000, n_reps=32)
_STEP_F = dict(_SIZE, rule="stepmix", n_episodes=100_000, n_reps=64, reference=True)
_EPS_Q = dict(_SIZE, rule="epsmix", n_episodes=3_000, n_reps=32)
_EPS_F = dict(_SIZE, rule="epsmix", n_episodes=30_000, n_reps=64, reference=True)
_CUM_Q = dict(_SIZE, rule="cumulative", n_episodes=3_000, n_reps=32)
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
    sim.Experiment("mdp.cumulative-zero-violations", cumulative_free, quick=_CUM_Q, full=_CUM_F,
                   title="Cumulative constraint: no violation in >= 1 - delta of runs"),
]

if __name__ == "__main__":
    if sim.experiment_main(EXPERIMENTS):
        raise SystemExit(1)
