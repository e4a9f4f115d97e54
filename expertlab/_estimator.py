r"""The scikit-learn estimator contract, shared by the estimator classes of expertlab.

:class:`EstimatorMixin` gives a class whose ``__init__`` only stores its
arguments under their own names:

- ``get_params(deep=True)`` and ``set_params(**params)``, read from the
  signature of ``__init__`` (nested ``component__name`` keys reach a
  parameter that is itself an estimator);
- a short ``repr`` that names the parameters set away from their defaults
  (and the ``seed`` always), with arrays and records abbreviated, and an
  HTML table for notebooks (``_repr_html_``);
- ``__sklearn_tags__`` and ``__sklearn_is_fitted__``, so that
  scikit-learn's ``clone``, its model-selection tools and its estimator
  checks accept the class.  scikit-learn is imported only when one of its
  functions asks for the tags: it is not a dependency of expertlab.

Parameters are validated when ``fit`` runs, never in ``__init__`` or
``set_params`` (scikit-learn's rule, so that ``set_params`` followed by
``fit`` validates the new values).  A fitted estimator has a ``result_``
attribute; methods that need one call :meth:`EstimatorMixin._check_fitted`,
which raises :class:`NotFittedError`.
"""

from __future__ import annotations

import html
import inspect
import numbers

import numpy as np

from ._validation import as_real_array

__all__ = ["EstimatorMixin", "NotFittedError"]

#: Widest line of a repr, and most lines.
_WIDTH = 88
_MAX_LINES = 8


class NotFittedError(ValueError, AttributeError):
    """A method that needs a fitted estimator was called before ``fit``.

    A subclass of both :class:`ValueError` and :class:`AttributeError`, as
    scikit-learn's exception of the same name.
    """


def _is_scalar(value) -> bool:
    return value is None or isinstance(value, (str, bool, numbers.Number, np.generic))


def _same(value, default) -> bool:
    """Whether a parameter still holds its default (``is``, or equal scalars of one kind)."""
    if value is default:
        return True
    if not (_is_scalar(value) and _is_scalar(default)):
        return False
    if isinstance(value, (str, np.str_)) or isinstance(default, (str, np.str_)):
        return isinstance(value, (str, np.str_)) and isinstance(default, (str, np.str_)) and value == default
    if value is None or default is None:
        return False
    if isinstance(value, (bool, np.bool_)) != isinstance(default, (bool, np.bool_)):
        return False
    return bool(value == default)


def _scalar_text(value) -> str:
    if isinstance(value, np.generic):
        value = value.item()
    text = repr(value)
    if isinstance(value, float) and len(text) > 10:
        return f"{value:.6g}"
    return text if len(text) <= 40 else text[:37] + "..."


def _short(value) -> str:
    """A one-line description of a parameter value: never an array dump or a memory address."""
    if _is_scalar(value):
        return _scalar_text(value)
    if isinstance(value, (list, tuple)):
        if len(value) <= 6 and all(_is_scalar(v) for v in value):
            inner = ", ".join(_scalar_text(v) for v in value)
            return f"[{inner}]" if isinstance(value, list) else f"({inner}{',' if len(value) == 1 else ''})"
        return f"<{type(value).__name__} of {len(value)}>"
    if isinstance(value, np.ndarray):
        if value.ndim <= 1 and value.size <= 6 and value.dtype.kind in "biuf":
            return "array([" + ", ".join(_scalar_text(v) for v in value.ravel()) + "])"
        return f"array(shape={value.shape})"
    if isinstance(value, type):
        return value.__name__
    if hasattr(value, "get_params") and not isinstance(value, type):
        return type(value).__name__ + "(...)"
    if callable(value):
        return getattr(value, "__qualname__", type(value).__name__)
    return type(value).__name__ + "(...)"


class EstimatorMixin:
    """``get_params``/``set_params``, short reprs and scikit-learn tags from the ``__init__`` signature.

    Subclasses store every ``__init__`` argument unchanged under its own name
    and set ``_estimator_type`` to ``"density_estimator"``, ``"regressor"``
    or ``None`` (scikit-learn's kinds).  ``_repr_always`` names parameters
    shown in the repr even at their default.

    Examples
    --------
    >>> class Toy(EstimatorMixin):
    ...     def __init__(self, width=1.0, *, seed=0):
    ...         self.width = width
    ...         self.seed = seed
    >>> Toy().get_params()
    {'seed': 0, 'width': 1.0}
    >>> Toy(2.0).set_params(seed=3)
    Toy(width=2.0, seed=3)
    """

    _estimator_type = None
    _repr_always = ("seed",)

    @classmethod
    def _get_param_names(cls):
        sig = inspect.signature(cls.__init__)
        names = []
        for p in list(sig.parameters.values())[1:]:
            if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
                raise TypeError(f"{cls.__name__}.__init__ must not take *args or **kwargs")
            names.append(p.name)
        return sorted(names)

    @classmethod
    def _defaults(cls):
        sig = inspect.signature(cls.__init__)
        return {p.name: p.default for p in list(sig.parameters.values())[1:]}

    def get_params(self, deep=True):
        """The estimator's parameters, by name.

        Parameters
        ----------
        deep : bool
            Also list ``name__sub`` for every parameter ``name`` that is itself an estimator.

        Returns
        -------
        dict
        """
        out = {}
        for name in self._get_param_names():
            value = getattr(self, name)
            if deep and hasattr(value, "get_params") and not isinstance(value, type):
                out.update((f"{name}__{k}", v) for k, v in value.get_params(deep=True).items())
            out[name] = value
        return out

    def set_params(self, **params):
        """Set parameters by name (``name__sub`` reaches a parameter of a nested estimator); returns ``self``.

        Values are not checked here: ``fit`` checks them.

        Raises
        ------
        ValueError
            If a name is not a parameter of the estimator.
        """
        if not params:
            return self
        valid = self._get_param_names()
        nested = {}
        for key, value in params.items():
            name, delim, sub = key.partition("__")
            if name not in valid:
                raise ValueError(f"{key!r} is not a parameter of {type(self).__name__}; "
                                 f"its parameters are {', '.join(valid)}")
            if delim:
                nested.setdefault(name, {})[sub] = value
            else:
                setattr(self, name, value)
        for name, sub in nested.items():
            inner = getattr(self, name)
            inner_valid = inner.get_params(deep=True) if hasattr(inner, "get_params") else {}
            for key in sub:
                if key.partition("__")[0] not in inner_valid:
                    raise ValueError(f"'{name}__{key}' is not a parameter of {type(self).__name__}: "
                                     f"{key.partition('__')[0]!r} is not a parameter of {type(inner).__name__}")
            inner.set_params(**sub)
        return self

    def _shown_params(self):
        """``(name, value, changed)`` in signature order; changed is False for a default value."""
        out = []
        for name, default in self._defaults().items():
            value = getattr(self, name)
            changed = default is inspect.Parameter.empty or not _same(value, default)
            out.append((name, value, changed))
        return out

    def __repr__(self) -> str:
        cls = type(self).__name__
        items = [f"{n}={_short(v)}" for n, v, changed in self._shown_params() if changed or n in self._repr_always]
        one = f"{cls}({', '.join(items)})"
        if len(one) <= _WIDTH:
            return one
        width = _WIDTH - len(cls) - 1
        lines = [items[0]]
        for item in items[1:]:                          # greedy fill, never splitting an item
            if len(lines[-1]) + 2 + len(item) + 1 <= width:       # room for the "," or ")" that ends a line
                lines[-1] += ", " + item
            else:
                lines[-1] += ","
                lines.append(item)
        if len(lines) > _MAX_LINES:
            lines = lines[:_MAX_LINES - 1] + ["..."]
        pad = " " * (len(cls) + 1)
        return cls + "(" + ("\n" + pad).join(lines) + ")"

    def _fitted_summary(self):
        """``(name, value)`` pairs describing a fit, for ``_repr_html_`` (empty before ``fit``)."""
        if not self.__sklearn_is_fitted__():
            return []
        return [(n, getattr(self, n)) for n in ("n_iter_", "converged_", "n_features_in_") if hasattr(self, n)]

    def _repr_html_(self) -> str:
        cls = html.escape(type(self).__name__)
        state = "fitted" if self.__sklearn_is_fitted__() else "not fitted"
        rows = []
        for name, value, changed in self._shown_params():
            text = html.escape(_short(value))
            rows.append(f"<tr><td>{html.escape(name)}</td><td>{'<b>' + text + '</b>' if changed else text}</td></tr>")
        for name, value in self._fitted_summary():
            rows.append(f"<tr><td>{html.escape(name)}</td><td>{html.escape(_short(value))}</td></tr>")
        return (f"<table class=\"expertlab-estimator\"><caption style=\"text-align:left\"><b>{cls}</b> "
                f"({state}; parameters set away from their defaults in bold)</caption>"
                f"<tbody>{''.join(rows)}</tbody></table>")

    def __sklearn_is_fitted__(self) -> bool:
        return hasattr(self, "result_")

    def _check_fitted(self, method: str):
        if not self.__sklearn_is_fitted__():
            raise NotFittedError(f"this {type(self).__name__} is not fitted yet; call fit before {method}")

    def _validate_X(self, X, *, fitted=False):
        """``X`` as a finite float array of shape (n_samples, n_features), checked against the fit when ``fitted``.

        Raises
        ------
        TypeError
            If ``X`` does not hold real numbers (complex, strings, objects) or is sparse.
        ValueError
            If ``X`` is not 2-D, is empty, holds NaN or infinity, or (``fitted``) has another number of features.
        """
        if type(X).__module__.startswith("scipy.sparse"):  # a sparse matrix, without importing scipy.sparse
            raise TypeError(f"X is a sparse {type(X).__name__}; {type(self).__name__} needs a dense array "
                            "(X.toarray())")
        X = as_real_array(X, "X", np)
        if X.ndim != 2:
            raise ValueError(f"X must have shape (n_samples, n_features), got shape {X.shape}. Reshape your data: "
                             "X.reshape(-1, 1) if it has one feature, X.reshape(1, -1) if it is one sample")
        for axis, what in ((0, "sample"), (1, "feature")):
            if X.shape[axis] < 1:
                raise ValueError(f"X has 0 {what}(s) (shape={X.shape}) while a minimum of 1 is required.")
        if not np.all(np.isfinite(X)):
            raise ValueError("X contains NaN or infinite values")
        if fitted and X.shape[1] != self.n_features_in_:
            raise ValueError(f"X has {X.shape[1]} features, but {type(self).__name__} is expecting "
                             f"{self.n_features_in_} features as input")
        return X

    def _validate_y(self, y, n_samples):
        """``y`` as a finite float array of shape (n_samples,)."""
        if y is None:
            raise ValueError(f"{type(self).__name__} requires y to be passed, but the target y is None")
        y = as_real_array(y, "y", np)
        if y.shape != (n_samples,):
            raise ValueError(f"y must have shape ({n_samples},) like the rows of X, got {y.shape}")
        if not np.all(np.isfinite(y)):
            raise ValueError("y contains NaN or infinite values")
        return y

    def __sklearn_tags__(self):
        # Called by scikit-learn only, so scikit-learn is installed whenever this runs.
        from sklearn.utils import RegressorTags, Tags, TargetTags

        kind = self._estimator_type
        return Tags(estimator_type=kind, target_tags=TargetTags(required=kind == "regressor"),
                    transformer_tags=None, regressor_tags=RegressorTags() if kind == "regressor" else None,
                    classifier_tags=None)
