"""Conservative exploration: hand-worked pessimistic values and weights, batching, guarantees, validation."""

import dataclasses
import math

import numpy as np
import pytest

from expertlab import sim
from expertlab.random import rep_key, round_key, stream_key, LEARNER_STREAM
from expertlab.mdp import (ConservativeBaseline, ConservativeMDP, FiniteHorizonMDP, MixedPlan, backward_induction,
                           conservative, conservative_garnet, conservative_ucbvi, epsmix, epsmix_probability,
                           evaluate_markov_policy, evaluate_stochastic_policy, known_baseline, learned_baseline,
                           mix_policies, pessimism_bonus, pessimistic_values, sample_episodes, sample_mixed_policy,
                           stepmix, stepmix_weight)
from expertlab.mdp.instances import garnet


def small(seed=3, s=3, a=2, h=3):
    g = garnet(s, a, min(3, s), seed=seed)
    return FiniteHorizonMDP.stationary(g.transitions, g.rewards, h)


def test_stochastic_evaluation_matches_markov_for_deterministic_policies():
    m = small()
    pi = np.array([[[0, 1, 1], [1, 0, 0], [1, 1, 0]], [[1, 1, 1], [0, 0, 0], [0, 1, 0]]])
    onehot = (pi[..., None] == np.arange(2)).astype(float)
    np.testing.assert_allclose(evaluate_stochastic_policy(m, onehot), evaluate_markov_policy(m, pi), atol=1e-12)


def test_stochastic_evaluation_is_linear_in_a_one_stage_mixture():
    # H = 1: the value of a mixture is the mixture of the rewards
    m = small(h=1)
    r = np.asarray(m.rewards)[0]
    pi = np.full((1, 1, 3, 2), 0.0)
    pi[0, 0, :, 0] = 0.3
    pi[0, 0, :, 1] = 0.7
    np.testing.assert_allclose(evaluate_stochastic_policy(m, pi)[0, 0], 0.3 * r[:, 0] + 0.7 * r[:, 1])


def test_hand_worked_pessimistic_values():
    # one state, two actions, H = 2, every pair seen 4 times, L1 = 2: the last stage has no bonus,
    # stage 0 has b = (2 - 0 - 1) / 2 * sqrt(2 * 2 / 4) = 0.5
    rewards = np.array([[[0.2, 0.6]], [[0.9, 0.1]]])
    counts = np.full((1, 2, 1, 2, 1), 4.0)
    pi = np.array([[[[0.5, 0.5]], [[0.25, 0.75]]]])
    v = pessimistic_values(counts, rewards, pi, log_term=2.0)
    v1 = 0.25 * 0.9 + 0.75 * 0.1  # 0.3
    q0 = np.array([0.2, 0.6]) + max(0.0, v1 - 0.5)  # the bonus wipes out the future
    np.testing.assert_allclose(v[0, 1, 0], v1)
    np.testing.assert_allclose(v[0, 0, 0], 0.5 * q0.sum())
    np.testing.assert_allclose(pessimism_bonus(4.0, 0, 2, log_term=2.0), 0.5)
    # with a tiny bonus the future counts almost fully
    v_small = pessimistic_values(counts, rewards, pi, log_term=2.0, scale=1e-9)
    np.testing.assert_allclose(v_small[0, 0, 0], 0.4 + v1, atol=1e-8)
    # unvisited pairs are worth their reward only
    v_none = pessimistic_values(np.zeros_like(counts), rewards, pi, log_term=2.0)
    np.testing.assert_allclose(v_none[0, 0, 0], 0.4)


def test_mix_policies_endpoints():
    opt = np.array([[[1, 0]]])
    base = np.array([[[0.5, 0.5], [1.0, 0.0]]])
    np.testing.assert_allclose(mix_policies(opt, base, np.array([0.0]))[0], base)
    np.testing.assert_allclose(mix_policies(opt, base, np.array([1.0]))[0], [[[0.0, 1.0], [1.0, 0.0]]])


def test_stepmix_weight_one_stage_closed_form():
    # H = 1 (no bonus): g(w) = w * r_opt + (1 - w) * r_b; r_opt = 0.1, r_b = 1, threshold 0.73 -> w* = 0.3
    rewards = np.array([[[0.1, 1.0]]])
    counts = np.full((2, 1, 1, 2, 1), 5.0)
    opt = np.zeros((2, 1, 1), dtype=np.int64)
    base = np.array([[[0.0, 1.0]]])
    w, low = stepmix_weight(counts, rewards, opt, base, 0.73, 0, log_term=3.0, n_bisect=20)
    np.testing.assert_allclose(w, 0.3, atol=2e-6)
    assert np.all(w <= 0.3 + 1e-12) and np.all(low >= 0.73)
    w1, _ = stepmix_weight(counts, rewards, opt, base, 0.05, 0, log_term=3.0)
    np.testing.assert_array_equal(w1, [1.0, 1.0])


def test_stepmix_weight_is_zero_when_the_baseline_fails_the_pessimistic_test():
    rewards = np.array([[[0.1, 1.0]]])
    counts = np.full((1, 1, 1, 2, 1), 5.0)
    w, low = stepmix_weight(counts, rewards, np.zeros((1, 1, 1), dtype=np.int64), np.array([[[0.0, 1.0]]]), 1.5,
                            0, log_term=3.0)
    assert w[0] == 0.0 and np.isnan(low[0])


def test_epsmix_probability_meets_the_constraint_with_equality():
    low = np.array([0.0, 0.3, 0.69, 0.95])
    vb, alpha = 1.0, 0.3
    eps = epsmix_probability(low, vb, alpha)
    np.testing.assert_allclose(eps[:3], alpha * vb / (vb - low[:3]))
    assert eps[3] == 1.0
    np.testing.assert_allclose(eps[:2] * low[:2] + (1 - eps[:2]) * vb, (1 - alpha) * vb)
    # learned baseline: credit 0.9, reference 1.1 -> slack 0.9 - 0.77 = 0.13
    np.testing.assert_allclose(epsmix_probability(np.array([0.4]), 0.9, 0.3, 1.1), 0.13 / 0.5)
    assert epsmix_probability(np.array([0.0]), 0.5, 0.3, 1.1)[0] == 0.0


def test_known_baseline_of_conservative_garnet():
    env = conservative_garnet(seed=2)
    m, b = env.model, env.baseline
    q = np.asarray(backward_induction(m).q_values)
    pol = q.argmax(-1)
    pol[0] = q[0].argmin(-1)
    assert b.value == b.reference == pytest.approx(float(evaluate_markov_policy(m, pol[None])[0, 0, 0]))
    assert b.value < float(backward_induction(m).values[0, 0]) == env.optimal_value()
    assert env.baseline_value == b.reference and env.threshold == pytest.approx(0.8 * b.value)


def test_the_environment_and_its_spec():
    env = conservative_garnet(seed=2, alpha=0.3)
    assert isinstance(env, ConservativeMDP) and sim.is_environment(env)
    spec = env.spec
    assert (spec.feedback, spec.unit, spec.n_actions) == ("conservative_episode", "episode", 2)
    assert spec.baseline is env.baseline and spec.alpha == 0.3 and spec.episode_length == 3
    assert set(env.available_metrics()) == {"regret", "realised_regret", "violations", "cumulative_violations",
                                            "conservative_mass"}
    assert env.name == "conservative_garnet" and env.params["alpha"] == 0.3
    reg = sim.get_environment("conservative_garnet")
    assert reg.family == "mdp" and reg.feedback == "conservative_episode"
    assert reg(seed=2, alpha=0.3).params == env.params


def _learner(rule, k, m, **kw):
    scale = 1.0 / (7.0 * math.log(5.0 * m.n_states * m.n_actions * k * m.horizon / 0.1))
    return conservative_ucbvi(rule, bonus_scale=scale, stationary=True, **kw)


def _env(**kw):
    return conservative_garnet(seed=2, alpha=0.3, **kw)


@pytest.mark.parametrize("rule", ["stepmix", "epsmix", "cumulative", "unconstrained"])
def test_batch_independence_and_reproducibility(rule):
    env = _env()
    lr = _learner(rule, 60, env.model)
    full = sim.run(lr, env, horizon=60, n_reps=4, seed=7)
    again = sim.run(lr, env, horizon=60, n_reps=4, seed=7)
    for k in full.metrics:
        np.testing.assert_array_equal(full.metrics[k], again.metrics[k])
    for r in (0, 3):
        one = sim.run(lr, env, horizon=60, n_reps=1, seed=7, rep_offset=r)
        for k in full.metrics:
            np.testing.assert_allclose(one.metrics[k][:, 0], full.metrics[k][:, r], atol=1e-12, err_msg=k)
    other = sim.run(lr, env, horizon=60, n_reps=4, seed=8)
    assert not np.array_equal(other.metrics["realised_regret"], full.metrics["realised_regret"])


def test_the_coins_come_from_the_learner_keys():
    # EpsMix's episode coin and StepMix's step coins are pure functions of the learner's round keys: replaying
    # one replication by hand with the engine's keys gives the same plays and the same realised returns
    env = _env()
    lr = epsmix(bonus_scale=0.05, stationary=True)
    res = sim.run(lr, env, horizon=30, n_reps=3, seed=4, rep_offset=5, checkpoints=[30])
    rk = rep_key(np.full(3, np.uint64(4)), np.arange(5, 8, dtype=np.uint64))
    lk = stream_key(rk, LEARNER_STREAM)
    spec = dataclasses.replace(env.spec, horizon=30)
    st = lr.init(spec, 3)
    realised = np.zeros(3)
    v_star = env.optimal_value()
    coins = []
    for k in range(30):
        kt = round_key(lk, np.full(3, k, dtype=np.uint64))
        plan, st = lr.act(st, None, kt)
        np.testing.assert_array_equal(plan.policy, sample_mixed_policy(plan, env.baseline.policy, kt))
        coins.append(plan.episode_prob)
        traj = sample_episodes(env.model, plan.policy, round_key(rk, np.full(3, k, dtype=np.uint64)), 0)
        realised += v_star - traj.rewards.sum(axis=1)
        st = lr.update(st, plan, traj, kt)
    np.testing.assert_allclose(res.metrics["realised_regret"][-1], realised, atol=1e-12)
    assert any(((c > 0) & (c < 1)).any() for c in coins)  # the coins were really random
    with pytest.raises(ValueError, match="keys"):
        lr.act(st, None, None)


def test_conservative_rules_respect_constraints_and_ucbvi_does_not():
    env = _env()
    res = {r: sim.run(_learner(r, 300, env.model), env, horizon=300, n_reps=8, seed=0)
           for r in ("stepmix", "epsmix", "cumulative", "unconstrained")}
    assert res["stepmix"].metrics["violations"].max() == 0 and res["epsmix"].metrics["violations"].max() == 0
    assert res["cumulative"].metrics["cumulative_violations"].max() == 0
    # the check can fail: unconstrained optimism plays below the threshold early on
    assert res["unconstrained"].metrics["violations"][-1].min() > 0
    assert np.all(res["unconstrained"].metrics["conservative_mass"] == 0)
    for r in res.values():
        regret = r.metrics["regret"]
        assert np.all(regret >= -1e-12) and np.all(np.diff(regret, axis=0) >= -1e-12)
    # a learner may keep to a stricter alpha than the environment's constraint
    strict = sim.run(_learner("stepmix", 300, env.model, alpha=0.05), env, horizon=300, n_reps=8, seed=0)
    assert (strict.metrics["conservative_mass"][-1] >= res["stepmix"].metrics["conservative_mass"][-1]).all()


def test_mixed_sampling_endpoints_and_mean_return():
    env = conservative_garnet(seed=2)
    m, b = env.model, env.baseline
    n = 4000
    keys = round_key(rep_key(np.full(n, np.uint64(5)), np.arange(n, dtype=np.uint64)), np.zeros(n, np.uint64))
    lkeys = stream_key(keys, LEARNER_STREAM)
    opt = np.broadcast_to(np.asarray(backward_induction(m).policy), (n, 3, 3)).astype(np.int64)
    ones, zeros = np.ones(n), np.zeros(n)
    np.testing.assert_array_equal(sample_mixed_policy(MixedPlan(opt, ones, ones, ones), b.policy, lkeys), opt)
    base_a = np.broadcast_to(b.policy.argmax(-1), (n, 3, 3))
    np.testing.assert_array_equal(sample_mixed_policy(MixedPlan(opt, ones, zeros, ones), b.policy, lkeys), base_a)
    np.testing.assert_array_equal(sample_mixed_policy(MixedPlan(opt, zeros, ones, ones), b.policy, lkeys), base_a)
    # a per-step mixture with w = 0.4: the mean return is the exact value within 4 standard errors
    w = np.full(n, 0.4)
    pol = sample_mixed_policy(MixedPlan(opt, w, ones, ones), b.policy, lkeys)
    rew = sample_episodes(m, pol, keys, 0).rewards
    exact = evaluate_stochastic_policy(m, mix_policies(opt[:1], b.policy, w[:1]))[0, 0, 0]
    ret = rew.sum(axis=1)
    assert abs(ret.mean() - exact) < 4 * ret.std() / math.sqrt(n)
    # an EpsMix coin of 0.3: about 30% of the episodes follow the optimistic policy
    pol = sample_mixed_policy(MixedPlan(opt, ones, np.full(n, 0.3), ones), b.policy, lkeys)
    frac = (pol != base_a).any(axis=(1, 2)).mean()
    assert abs(frac - 0.3) < 5 * math.sqrt(0.3 * 0.7 / n)
    # a stochastic baseline: its actions are drawn by inverse CDF
    half = np.full((3, 3, 2), 0.5)
    pol = sample_mixed_policy(MixedPlan(opt, zeros, ones, ones), half, lkeys)
    assert abs(pol.mean() - 0.5) < 5 * 0.5 / math.sqrt(pol.size)


def test_learned_baseline_clones_the_behaviour_and_brackets_its_value():
    env = conservative_garnet(seed=2)
    m, known = env.model, env.baseline
    behaviour = known.policy.argmax(-1).astype(np.int64)
    lb = learned_baseline(m, behaviour, 2000, delta=0.01, seed=1)
    assert lb.value <= known.value <= lb.reference
    np.testing.assert_allclose(lb.reference - lb.value, 2 * 3 * math.sqrt(math.log(200) / 4000))
    np.testing.assert_allclose(evaluate_stochastic_policy(m, lb.policy[None])[0, 0, 0], known.value)
    learned_env = conservative(m, lb, alpha=0.3, baseline_value=known.value)
    assert learned_env.spec.baseline is lb and learned_env.baseline_value == known.value
    res = sim.run(epsmix(), learned_env, horizon=40, n_reps=4, seed=0)
    assert res.metrics["violations"].max() == 0


def test_validation_errors():
    env = conservative_garnet(seed=2)
    m, b = env.model, env.baseline
    with pytest.raises(ValueError, match="rule"):
        conservative_ucbvi("greedy")
    for bad in (0.0, 1.0, float("nan")):
        with pytest.raises(ValueError, match="alpha"):
            stepmix(alpha=bad)
        with pytest.raises(ValueError, match="alpha"):
            conservative(m, b, alpha=bad)
    with pytest.raises(ValueError, match="pessimism_scale"):
        epsmix(pessimism_scale=-1.0)
    with pytest.raises(TypeError):
        stepmix(b)  # the baseline comes from the environment (spec.baseline)
    with pytest.raises(ValueError, match="policy"):
        evaluate_stochastic_policy(m, np.full((1, 3, 3, 2), 0.7))
    with pytest.raises(ValueError, match="policy"):
        evaluate_stochastic_policy(m, np.full((1, 2, 3, 2), 0.5))
    with pytest.raises(ValueError, match="NaN"):
        evaluate_stochastic_policy(m, np.full((1, 3, 3, 2), np.nan))
    with pytest.raises(ValueError, match="policy"):
        known_baseline(m, np.full((3, 3), 5))
    with pytest.raises(ValueError, match="behaviour"):
        learned_baseline(m, np.zeros((2, 3), dtype=np.int64), 10)
    with pytest.raises(ValueError, match="n_trajectories"):
        learned_baseline(m, np.zeros((3, 3), dtype=np.int64), 0)
    wrong = ConservativeBaseline(np.full((2, 3, 2), 0.5), 1.0, 1.0)
    with pytest.raises(ValueError, match="baseline.policy"):
        conservative(m, wrong)
    with pytest.raises(TypeError, match="baseline"):
        conservative(m, "nope")
    with pytest.raises(ValueError, match="baseline_value"):
        conservative(m, b, baseline_value=float("inf"))
    with pytest.raises(ValueError, match="initial_state"):
        conservative(m, b, initial_state=3)
    with pytest.raises(ValueError, match="checkpoints"):
        sim.run(stepmix(), env, horizon=5, n_reps=1, checkpoints=[3, 7])
    with pytest.raises(ValueError, match="feedback"):
        sim.run(stepmix(), m, horizon=5, n_reps=1)  # a plain MDP has no baseline
    with pytest.raises(ValueError, match="needs a baseline"):
        stepmix().init(dataclasses.replace(m.spec, horizon=5), 1)
    from expertlab.mdp import ucbvi
    with pytest.raises(ValueError, match="feedback"):
        sim.run(ucbvi(), env, horizon=5, n_reps=1)


def test_a_sweep_runs_episodic_and_conservative_learners_from_plain_configs(tmp_path):
    configs = [
        {"learner": "ucbvi", "learner_params": {"bonus": "rlberry"}, "instance": "garnet_episodic",
         "instance_params": {"n_states": 5, "n_actions": 2, "episode_length": 4, "seed": 0}, "horizon": 30},
        {"learner": "stepmix", "learner_params": {"bonus_scale": 0.05, "stationary": True},
         "instance": "conservative_garnet", "instance_params": {"seed": 2, "alpha": 0.3}, "horizon": 30},
    ]
    out = sim.sweep(configs, 5, block_size=2, seed=3, out=tmp_path, executor="serial")
    ucb, step = out.results
    assert ucb.unit == step.unit == "episode" and ucb.n_reps == step.n_reps == 5
    assert set(step.metrics) == {"regret", "realised_regret", "violations", "cumulative_violations",
                                 "conservative_mass"}
    # the blocks of a sweep equal one run of all replications at the config's seed
    whole = sim.run(stepmix(bonus_scale=0.05, stationary=True), conservative_garnet(seed=2, alpha=0.3), horizon=30,
                    n_reps=5, seed=out.seeds[1])
    for k in whole.metrics:
        np.testing.assert_allclose(step.metrics[k], whole.metrics[k], rtol=0, atol=1e-12)
    again = sim.sweep(configs, 5, block_size=2, seed=3, out=tmp_path, executor="serial")
    assert again.n_computed == 0
