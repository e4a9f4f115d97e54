"""Bad-input cases of the engine (``expertlab.sim``) for ``test_bad_inputs.py``.

``sim`` registers no learner or environment; its callables are tested in
``tests/unit/sim``.  ``EXEMPT``: public name -> why it needs no bad-input test.
"""

LEARNERS = {}

ENVIRONMENTS = {}

EXEMPT = {
    "expertlab.sim.SweepResult":
        "a result record sweep() and load_sweep() return: users read it and never construct one",
    "expertlab.sim.RateCheck":
        "a result record check_rate returns: users read it and never construct one",
    "expertlab.sim.Registered":
        "the record register_learner/register_environment build after validating their arguments",
    "expertlab.sim.Environment":
        "an abstract base class users subclass; the records a subclass builds (EnvSpec, Metric) are checked",
    "expertlab.sim.is_environment":
        "a predicate: every object has a True/False answer, so no input is bad",
}
