"""
Memory-bounded experts
======================

A pool of S experts run with Hedge, keeping the best half each epoch and
refilling at random, on a needle (one expert with gap 6 sqrt(n/(ST)) among
fair coins): the pseudo-regret scales as sqrt(nT/S) in S, n and T, and the
measured state size is linear in S and independent of n.  Against an
adaptive adversary that punishes the last sqrt(n) experts played, the same
learner with a small pool has linear regret, while the variant that plays a
pool of 2 sqrt(n) experts in a fresh random cycle each epoch has regret
growing like sqrt(T).
"""

import math

import numpy as np

from expertlab import sim
from expertlab.experts import hedge, instances, memory_adaptive, memory_bounded, recent_plays_attack, state_nbytes

GAP = 6.0  # needle gap in units of sqrt(n / (S T)); the default epoch gives eps^2 B = GAP^2 / 6


def _needle_regret(S, n, T, s, backend, seed):
    gap = GAP * math.sqrt(n / (S * T))
    # settings may name Hedge tuned to T on all n experts (no memory bound) or fix the epoch length in place
    # of the one tuned to T
    epoch = s.get("epoch")
    if s.get("learner", "memory_bounded") == "hedge":
        L = hedge(horizon=T)
    else:
        L = memory_bounded(S, horizon=T) if epoch is None else memory_bounded(S, epoch=epoch)
    res = sim.run(L, instances.needle(n, gap), horizon=T, n_reps=s["n_reps"], seed=seed,
                  backend=backend, checkpoints=[T])
    return res.metric("pseudo_regret")[-1], gap * T


def _sweep(configs, x, xlabel, s, backend, seed):
    ys, trivial = [], []
    for S, n, T in configs:
        y, never = _needle_regret(S, n, T, s, backend, seed)
        ys.append(y)
        trivial.append(never)
    x = np.asarray(x, dtype=float)
    scale = np.array([math.sqrt(n * T / S) for S, n, T in configs])
    y = np.stack(ys)
    c = float(np.exp(np.mean(np.log(y.mean(axis=1) / scale))))
    return sim.Measurement(x=x, y=y, xlabel=xlabel, ylabel="pseudo-regret at T",
                           curves={f"{c:.2f} √(nT/S)": (x, c * scale),
                                   "never finding the needle: εT": (x, np.array(trivial))},
                           info={"fraction_of_eps_T": (y.mean(axis=1) / np.array(trivial)).tolist()})


def regret_vs_S(s, backend, seed):
    return _sweep([(S, s["n_experts"], s["horizon"]) for S in s["memory"]], s["memory"], "memory S", s,
                  backend, seed)


def regret_vs_n(s, backend, seed):
    return _sweep([(s["memory"], n, s["horizon"]) for n in s["n_experts"]], s["n_experts"], "experts n", s,
                  backend, seed)


def regret_vs_T(s, backend, seed):
    return _sweep([(s["memory"], s["n_experts"], T) for T in s["horizon"]], s["horizon"], "horizon T", s,
                  backend, seed)


def _bytes_after_two_epochs(S, n, learner="memory_bounded", n_reps=2):
    # learner="hedge": Hedge on all n experts in the pool learner's place (it keeps one regret per expert)
    L = memory_bounded(S, epoch=3) if learner == "memory_bounded" else hedge()
    state = L.init(n, n_reps)
    keys = np.arange(n_reps, dtype=np.uint64)
    for t in range(6):
        p, state = L.act(state, None, keys + np.uint64(1000 * t))
        state = L.update(state, p, (np.full((n_reps, n), 0.5), None))
    return state_nbytes(state)


def bytes_vs_S(s, backend, seed):
    x = np.array(s["memory"], dtype=float)
    y = np.array([[_bytes_after_two_epochs(S, s["n_experts"], s.get("learner", "memory_bounded"))] * 2
                  for S in s["memory"]])
    return sim.Measurement(x=x, y=y, xlabel="memory S", ylabel="state bytes per replication",
                           curves={"8 (3 + 3S)": (x, 8.0 * (3 + 3 * x))})


def bytes_vs_n(s, backend, seed):
    x = np.array(s["n_experts"], dtype=float)
    y = np.array([[_bytes_after_two_epochs(s["memory"], n, s.get("learner", "memory_bounded"))] * 2
                  for n in s["n_experts"]])
    return sim.Measurement(x=x, y=y, xlabel="experts n", ylabel="state bytes per replication")


def _attack(s, learner, seed):
    T = s["horizon"]
    r = sim.run(learner(s["memory"], epoch=T // s["n_epochs"]), recent_plays_attack(s["n_experts"]), T,
                s["n_reps"], seed, backend="numpy", metrics=["regret", "hits"])
    x = r.checkpoints.astype(float)
    return sim.Measurement(x=x, y=r.metrics["regret"], xlabel="round T", ylabel="regret against the adaptive adversary",
                           curves={"T/2": (x, x / 2), "√T": (x, np.sqrt(x))},
                           info={"attack_hits_final": float(r.mean("hits")[-1]), "wall_time": r.wall_time})


_POOL_LEARNERS = {"memory_bounded": memory_bounded, "memory_adaptive": memory_adaptive}


def attack_oblivious(s, backend, seed):
    return _attack(s, _POOL_LEARNERS[s.get("learner", "memory_bounded")], seed)  # or the other pool learner


def attack_adaptive(s, backend, seed):
    return _attack(s, _POOL_LEARNERS[s.get("learner", "memory_adaptive")], seed)


EXPERIMENTS = [
    sim.Experiment("experts.memory-regret-vs-S", regret_vs_S,
                   quick=dict(memory=[2, 4, 8], n_experts=128, horizon=10_000, n_reps=150),
                   full=dict(memory=[2, 4, 8, 16], n_experts=512, horizon=40_000, n_reps=400),
                   title="Pool learner on the needle: pseudo-regret ∝ S^(-1/2)"),
    sim.Experiment("experts.memory-regret-vs-n", regret_vs_n,
                   quick=dict(memory=2, n_experts=[16, 32, 64, 128], horizon=10_000, n_reps=250),
                   full=dict(memory=2, n_experts=[16, 32, 64, 128, 256, 512], horizon=40_000, n_reps=400),
                   title="Pool learner on the needle: pseudo-regret ∝ n^(1/2)"),
    sim.Experiment("experts.memory-regret-vs-T", regret_vs_T,
                   quick=dict(memory=2, n_experts=16, horizon=[2000, 4000, 8000, 16_000], n_reps=100),
                   full=dict(memory=2, n_experts=16, horizon=[2000, 4000, 8000, 16_000, 32_000, 64_000],
                             n_reps=400),
                   title="Pool learner on the needle: pseudo-regret ∝ T^(1/2)"),
    sim.Experiment("experts.memory-state-bytes-vs-S", bytes_vs_S,
                   quick=dict(memory=[16, 32, 64, 128, 256, 512, 1024], n_experts=4096),
                   full=dict(memory=[16, 32, 64, 128, 256, 512, 1024, 4096], n_experts=65_536),
                   title="State bytes linear in the memory S"),
    sim.Experiment("experts.memory-state-bytes-vs-n", bytes_vs_n,
                   quick=dict(memory=8, n_experts=[64, 512, 4096, 65_536]),
                   full=dict(memory=8, n_experts=[64, 512, 4096, 65_536, 1_048_576]),
                   title="State bytes independent of the number of experts n"),
    sim.Experiment("experts.memory-adaptive-oblivious-linear", attack_oblivious,
                   quick=dict(memory=4, n_experts=256, horizon=10_000, n_epochs=8, n_reps=40),
                   full=dict(memory=4, n_experts=1024, horizon=100_000, n_epochs=8, n_reps=200),
                   title="Adaptive adversary: the oblivious pool learner is linear"),
    sim.Experiment("experts.memory-adaptive-sublinear", attack_adaptive,
                   quick=dict(memory=32, n_experts=256, horizon=10_000, n_epochs=8, n_reps=100),
                   full=dict(memory=64, n_experts=1024, horizon=100_000, n_epochs=8, n_reps=400),
                   title="Adaptive adversary: a fresh random cycle over 2√n experts is sublinear"),
]

if __name__ == "__main__":
    if sim.experiment_main(EXPERIMENTS):
        raise SystemExit(1)
