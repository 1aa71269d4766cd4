"""Unit and property tests of sdpa_core.attention, scores_logits and causal_mask."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from sdpa_core import attention, causal_mask, scores_logits, softmax

PROPERTY = settings(max_examples=60, deadline=None)

LESSON_Q = np.array([[1.0, 1.0], [0.0, 2.0]])
LESSON_K = np.array([[1.0, 0.0], [0.0, 1.0]])
LESSON_V = np.array([[10.0, 0.0], [0.0, 10.0]])

VALUE = st.floats(-10, 10, allow_nan=False, allow_infinity=False)
SIDE = st.integers(1, 6)


def reference_attention(
    q: np.ndarray,
    k: np.ndarray,
    v: np.ndarray,
    *,
    scale: float | None = None,
    temperature: float = 1.0,
    mask: np.ndarray | None = None,
    bias: np.ndarray | None = None,
) -> tuple[list[list[float]], list[list[float]]]:
    """Plain float64 attention for one (n_q, d_k) problem, loop by loop with exact sums.

    A deliberately naive second implementation: every dot product and every normalising sum
    goes through math.fsum, so it shares no code and no rounding with the vectorised core.
    """
    n_q, d_k = q.shape
    n_k, d_v = v.shape
    factor = (1.0 / math.sqrt(d_k) if scale is None else scale) / temperature
    weights, output = [], []
    for i in range(n_q):
        logits = []
        for j in range(n_k):
            if mask is not None and not mask[i, j]:
                logits.append(-math.inf)
                continue
            dot = math.fsum(float(q[i, t]) * float(k[j, t]) for t in range(d_k))
            logits.append(dot * factor + (0.0 if bias is None else float(bias[i, j])))
        top = max(logits)
        if top == -math.inf:
            row = [0.0] * n_k
        else:
            exps = [0.0 if x == -math.inf else math.exp(x - top) for x in logits]
            total = math.fsum(exps)
            row = [e / total for e in exps]
        weights.append(row)
        output.append([math.fsum(row[j] * float(v[j, c]) for j in range(n_k)) for c in range(d_v)])
    return output, weights


@st.composite
def problems(draw: st.DrawFn, dtype: type = np.float64) -> tuple[np.ndarray, ...]:
    """A random (q, k, v) with n_q, n_k, d_k, d_v between 1 and 6."""
    n_q, n_k, d_k, d_v = (draw(SIDE) for _ in range(4))
    q = draw(arrays(dtype, (n_q, d_k), elements=VALUE))
    k = draw(arrays(dtype, (n_k, d_k), elements=VALUE))
    v = draw(arrays(dtype, (n_k, d_v), elements=VALUE))
    return q, k, v


# --- the lesson -------------------------------------------------------------------------------


def test_lesson_example_exactly() -> None:
    output, weights = attention(LESSON_Q, LESSON_K, LESSON_V)
    np.testing.assert_array_equal(np.round(output, 3), [[5.0, 5.0], [1.956, 8.044]])
    # Query 2 scores (0, 2)/√2 against the two keys, so its weight on key 2 is σ(√2).
    sigma = 1 / (1 + math.exp(-math.sqrt(2)))
    np.testing.assert_allclose(weights, [[0.5, 0.5], [1 - sigma, sigma]], rtol=1e-15)


def test_lesson_example_as_python_lists() -> None:
    output, _ = attention(LESSON_Q.tolist(), LESSON_K.tolist(), LESSON_V.tolist())
    assert np.round(output, 3).tolist() == [[5.0, 5.0], [1.956, 8.044]]


@PROPERTY
@given(problems())
def test_matches_the_lessons_own_formula(problem: tuple[np.ndarray, ...]) -> None:
    q, k, v = problem

    def lesson_softmax(z: np.ndarray, eksen: int = -1) -> np.ndarray:
        e = np.exp(z - z.max(axis=eksen, keepdims=True))
        return e / e.sum(axis=eksen, keepdims=True)

    lesson_weights = lesson_softmax(q @ k.T / np.sqrt(q.shape[-1]), eksen=-1)
    output, weights = attention(q, k, v)
    np.testing.assert_allclose(weights, lesson_weights, rtol=1e-12, atol=1e-300)
    np.testing.assert_allclose(output, lesson_weights @ v, rtol=1e-12, atol=1e-12)


# --- agreement with the plain float64 reference --------------------------------------------


@PROPERTY
@given(
    problems(),
    st.one_of(st.none(), st.floats(-3, 3)),
    st.floats(0.05, 20),
    st.data(),
)
def test_agrees_with_reference(
    problem: tuple[np.ndarray, ...], scale: float | None, temperature: float, data: st.DataObject
) -> None:
    q, k, v = problem
    n_q, n_k = q.shape[0], k.shape[0]
    mask = data.draw(st.one_of(st.none(), arrays(np.bool_, (n_q, n_k))), label="mask")
    bias = data.draw(
        st.one_of(
            st.none(),
            arrays(np.float64, (n_q, n_k), elements=st.one_of(VALUE, st.just(-math.inf))),
        ),
        label="bias",
    )
    output, weights = attention(q, k, v, scale=scale, temperature=temperature, mask=mask, bias=bias)
    ref_output, ref_weights = reference_attention(
        q, k, v, scale=scale, temperature=temperature, mask=mask, bias=bias
    )
    np.testing.assert_allclose(weights, ref_weights, rtol=1e-9, atol=1e-15)
    # Absolute slack for outputs that cancel to ~0: |v| ≤ 10 times a 1e-11 weight error.
    np.testing.assert_allclose(output, ref_output, rtol=1e-9, atol=1e-9)
    assert np.isfinite(output).all()


@PROPERTY
@given(problems(dtype=np.float32))
def test_float32_stays_float32_and_sums_to_one(problem: tuple[np.ndarray, ...]) -> None:
    q, k, v = problem
    output, weights = attention(q, k, v)
    assert output.dtype == weights.dtype == np.float32
    np.testing.assert_allclose(weights.sum(axis=-1, dtype=np.float64), 1.0, rtol=0, atol=1e-6)
    _, ref_weights = reference_attention(q.astype(np.float64), k.astype(np.float64), v)
    # Float32 logits of up to ~600 carry ~1e-4 absolute error, hence the loose tolerance.
    np.testing.assert_allclose(weights, ref_weights, rtol=1e-3, atol=1e-6)


def test_mixed_precision_computes_in_float64() -> None:
    q = LESSON_Q.astype(np.float32)
    output, weights = attention(q, LESSON_K, LESSON_V)
    assert output.dtype == weights.dtype == np.float64


@PROPERTY
@given(problems())
def test_weights_rows_sum_to_one_and_output_is_weights_times_v(
    problem: tuple[np.ndarray, ...],
) -> None:
    q, k, v = problem
    output, weights = attention(q, k, v)
    assert weights.shape == (q.shape[0], k.shape[0])
    assert output.shape == (q.shape[0], v.shape[1])
    np.testing.assert_allclose(weights.sum(axis=-1), 1.0, rtol=0, atol=1e-12)
    np.testing.assert_allclose(output, weights @ v, rtol=1e-13, atol=1e-13)


def test_does_not_modify_its_inputs() -> None:
    q, k, v = (np.random.default_rng(1).standard_normal((4, 3)) for _ in range(3))
    copies = [a.copy() for a in (q, k, v)]
    attention(q, k, v, scale=2.0, temperature=0.5, mask="causal", bias=np.zeros((4, 4)))
    for original, copy in zip((q, k, v), copies, strict=True):
        np.testing.assert_array_equal(original, copy)


def test_large_unscaled_scores_stay_finite() -> None:
    rng = np.random.default_rng(2)
    q = 100 * rng.standard_normal((8, 64))
    _, weights = attention(q, q, q, scale=1.0)
    assert np.isfinite(weights).all()
    np.testing.assert_allclose(weights.sum(axis=-1), 1.0, rtol=0, atol=1e-12)
    # Scores of order 1e5 make every row one-hot on its own token.
    np.testing.assert_array_equal(weights, np.eye(8))


# --- scale and temperature ---------------------------------------------------------------


@PROPERTY
@given(problems(), st.floats(-4, 4), st.floats(0.1, 10))
def test_scale_temperature_equivalence(
    problem: tuple[np.ndarray, ...], scale: float, temperature: float
) -> None:
    q, k, v = problem
    out_a, w_a = attention(q, k, v, scale=scale, temperature=temperature)
    out_b, w_b = attention(q, k, v, scale=scale / temperature, temperature=1.0)
    np.testing.assert_allclose(w_a, w_b, rtol=1e-12, atol=1e-300)
    np.testing.assert_allclose(out_a, out_b, rtol=1e-12, atol=1e-12)


@PROPERTY
@given(problems())
def test_default_scale_is_one_over_sqrt_dk_and_one_is_unscaled(
    problem: tuple[np.ndarray, ...],
) -> None:
    q, k, v = problem
    d_k = q.shape[-1]
    _, default = attention(q, k, v)
    _, explicit = attention(q, k, v, scale=1 / math.sqrt(d_k))
    np.testing.assert_allclose(default, explicit, rtol=1e-13, atol=1e-300)
    _, unscaled = attention(q, k, v, scale=1.0)
    np.testing.assert_allclose(unscaled, softmax(q @ k.T), rtol=1e-12, atol=1e-300)


@PROPERTY
@given(problems(), st.data())
def test_large_temperature_gives_uniform(
    problem: tuple[np.ndarray, ...], data: st.DataObject
) -> None:
    q, k, v = problem
    mask = data.draw(arrays(np.bool_, (q.shape[0], k.shape[0])), label="mask")
    _, weights = attention(q, k, v, temperature=1e15)
    np.testing.assert_allclose(weights, 1 / k.shape[0], rtol=1e-9)
    _, masked = attention(q, k, v, temperature=1e15, mask=mask)
    allowed = mask.sum(axis=-1, keepdims=True)
    expected = np.where(mask, 1 / np.maximum(allowed, 1), 0.0)
    np.testing.assert_allclose(masked, expected, rtol=1e-9, atol=0)


@PROPERTY
@given(problems())
def test_peak_weight_falls_and_entropy_rises_with_temperature(
    problem: tuple[np.ndarray, ...],
) -> None:
    q, k, v = problem
    temperatures = [0.05, 0.3, 1.0, 3.0, 30.0, 1e4]
    peaks = [attention(q, k, v, temperature=t)[1].max(axis=-1) for t in temperatures]
    for sharper, flatter in itertools.pairwise(peaks):
        assert (flatter <= sharper + 1e-12).all()


def test_small_temperature_gives_one_hot_on_the_best_key() -> None:
    q = np.array([[1.0, 0.0], [0.0, 1.0]])
    k = np.array([[0.9, 0.1], [0.1, 0.9], [0.5, 0.5]])
    _, weights = attention(q, k, k, temperature=1e-4)
    np.testing.assert_allclose(weights, [[1, 0, 0], [0, 1, 0]], atol=1e-12)


# --- masks and bias ----------------------------------------------------------------------


@PROPERTY
@given(problems(), st.data())
def test_masked_weights_are_exactly_zero(
    problem: tuple[np.ndarray, ...], data: st.DataObject
) -> None:
    q, k, v = problem
    mask = data.draw(arrays(np.bool_, (q.shape[0], k.shape[0])), label="mask")
    output, weights = attention(q, k, v, mask=mask)
    assert (weights[~mask] == 0.0).all()
    live = mask.any(axis=-1)
    np.testing.assert_allclose(weights[live].sum(axis=-1), 1.0, rtol=0, atol=1e-12)
    # A query that may attend to nothing gets zero weights and a zero output, not NaN.
    assert (weights[~live] == 0.0).all()
    assert (output[~live] == 0.0).all()
    assert np.isfinite(output).all()


@PROPERTY
@given(problems(), st.data())
def test_minus_inf_bias_is_the_same_as_a_mask(
    problem: tuple[np.ndarray, ...], data: st.DataObject
) -> None:
    q, k, v = problem
    mask = data.draw(arrays(np.bool_, (q.shape[0], k.shape[0])), label="mask")
    out_mask, w_mask = attention(q, k, v, mask=mask)
    out_bias, w_bias = attention(q, k, v, bias=np.where(mask, 0.0, -np.inf))
    np.testing.assert_array_equal(w_mask, w_bias)
    np.testing.assert_array_equal(out_mask, out_bias)


def test_key_padding_mask_broadcasts_over_queries() -> None:
    rng = np.random.default_rng(3)
    q, k, v = (rng.standard_normal((4, 3)) for _ in range(3))
    keep = np.array([True, True, False, True])
    _, weights = attention(q, k, v, mask=keep)
    np.testing.assert_array_equal(weights[:, 2], 0.0)
    _, expected = attention(q, k, v, mask=np.broadcast_to(keep, (4, 4)))
    np.testing.assert_array_equal(weights, expected)


@pytest.mark.parametrize(("n_q", "n_k"), [(1, 1), (4, 4), (3, 5), (5, 3)])
def test_causal_mask_is_top_left_aligned(n_q: int, n_k: int) -> None:
    rng = np.random.default_rng(4)
    q = rng.standard_normal((n_q, 3))
    k, v = rng.standard_normal((2, n_k, 3))
    _, weights = attention(q, k, v, mask="causal")
    rows, cols = np.indices((n_q, n_k))
    # PyTorch's is_causal: torch.ones(L, S).tril(diagonal=0), i.e. query i sees keys j ≤ i.
    assert (weights[cols > rows] == 0.0).all()
    assert (weights[cols <= rows] > 0.0).all()
    np.testing.assert_allclose(weights.sum(axis=-1), 1.0, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(weights[0], np.eye(1, n_k)[0])
    _, explicit = attention(q, k, v, mask=causal_mask(n_q, n_k))
    np.testing.assert_array_equal(weights, explicit)


def test_causal_mask_values() -> None:
    np.testing.assert_array_equal(
        causal_mask(3, 4),
        [[True, False, False, False], [True, True, False, False], [True, True, True, False]],
    )
    assert causal_mask(2, 2).dtype == np.bool_
    np.testing.assert_array_equal(causal_mask(3, 2), [[True, False], [True, True], [True, True]])


# --- batch dimensions --------------------------------------------------------------------


def test_batch_dimensions_broadcast() -> None:
    rng = np.random.default_rng(5)
    q = rng.standard_normal((2, 3, 4, 5))
    k = rng.standard_normal((6, 5))
    v = rng.standard_normal((1, 3, 6, 7))
    output, weights = attention(q, k, v)
    assert output.shape == (2, 3, 4, 7)
    assert weights.shape == (2, 3, 4, 6)
    for b in range(2):
        for h in range(3):
            out_bh, w_bh = attention(q[b, h], k, v[0, h])
            np.testing.assert_allclose(weights[b, h], w_bh, rtol=1e-14)
            np.testing.assert_allclose(output[b, h], out_bh, rtol=1e-13)


def test_causal_and_bool_masks_broadcast_over_batch() -> None:
    rng = np.random.default_rng(6)
    q, k, v = rng.standard_normal((3, 2, 5, 4))
    _, weights = attention(q, k, v, mask="causal")
    assert weights.shape == (2, 5, 5)
    for b in range(2):
        _, w_b = attention(q[b], k[b], v[b], mask=causal_mask(5, 5))
        np.testing.assert_array_equal(weights[b], w_b)
    per_batch = rng.random((2, 5, 5)) < 0.6
    _, masked = attention(q, k, v, mask=per_batch)
    assert (masked[~per_batch] == 0.0).all()


def test_mask_may_carry_more_batch_dimensions_than_the_scores() -> None:
    rng = np.random.default_rng(7)
    q, k, v = rng.standard_normal((3, 1, 4, 3))
    masks = rng.random((5, 4, 4)) < 0.7
    output, weights = attention(q, k, v, mask=masks)
    assert weights.shape == (5, 4, 4)
    assert output.shape == (5, 4, 3)
    for h in range(5):
        out_h, w_h = attention(q[0], k[0], v[0], mask=masks[h])
        np.testing.assert_array_equal(weights[h], w_h)
        np.testing.assert_allclose(output[h], out_h, rtol=1e-14, atol=1e-15)


def test_bias_broadcasts_and_shifts_logits() -> None:
    rng = np.random.default_rng(8)
    q, k, v = rng.standard_normal((3, 4, 2))
    bias = np.array([0.0, 1.0, -2.0, 0.5])
    _, weights = attention(q, k, v, bias=bias)
    expected = softmax(q @ k.T / math.sqrt(2) + bias)
    np.testing.assert_allclose(weights, expected, rtol=1e-13)


# --- scores_logits -----------------------------------------------------------------------


@PROPERTY
@given(problems(), st.floats(-3, 3), st.floats(0.1, 10), st.data())
def test_scores_logits_are_what_the_softmax_sees(
    problem: tuple[np.ndarray, ...], scale: float, temperature: float, data: st.DataObject
) -> None:
    q, k, v = problem
    mask = data.draw(arrays(np.bool_, (q.shape[0], k.shape[0])), label="mask")
    bias = data.draw(arrays(np.float64, (q.shape[0], k.shape[0]), elements=VALUE), label="bias")
    kwargs = {"scale": scale, "temperature": temperature, "mask": mask, "bias": bias}
    logits = scores_logits(q, k, **kwargs)
    assert (logits[~mask] == -np.inf).all()
    expected = q @ k.T * (scale / temperature) + bias
    np.testing.assert_allclose(logits[mask], expected[mask], rtol=1e-12, atol=1e-12)
    _, weights = attention(q, k, v, **kwargs)
    np.testing.assert_array_equal(softmax(logits), weights)


def test_scores_logits_default_scale() -> None:
    logits = scores_logits(LESSON_Q, LESSON_K)
    np.testing.assert_allclose(logits, LESSON_Q @ LESSON_K.T / math.sqrt(2), rtol=1e-15)


# --- every ValueError path ---------------------------------------------------------------

GOOD = (np.ones((2, 3)), np.ones((4, 3)), np.ones((4, 5)))


def replaced(index: int, value: object) -> list[object]:
    """The GOOD (q, k, v) with argument ``index`` replaced by ``value``."""
    arrays_ = list(GOOD)
    arrays_[index] = value
    return arrays_


def with_entry(index: int, value: float) -> list[object]:
    """The GOOD (q, k, v) with one entry of argument ``index`` set to ``value``."""
    bad = GOOD[index].copy()
    bad[0, 0] = value
    return replaced(index, bad)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (replaced(1, np.ones((4, 4))), "q and k must share their last dimension d_k: got 3 and 4"),
        (
            replaced(2, np.ones((3, 5))),
            "k and v must have the same number of keys n_k: got 4 and 3",
        ),
        (replaced(0, np.ones(3)), r"q must have at least 2 dimensions .*got shape \(3,\)"),
        (replaced(1, np.ones(3)), "k must have at least 2 dimensions"),
        (replaced(2, np.float64(1.0)), r"v must have at least 2 dimensions .*got shape \(\)"),
        ([np.ones((2, 0)), np.ones((4, 0)), np.ones((4, 5))], "d_k must be ≥ 1"),
        ([np.ones((2, 3)), np.ones((0, 3)), np.ones((0, 5))], "n_k must be ≥ 1"),
        (
            [np.ones((2, 2, 3)), np.ones((3, 4, 3)), np.ones((4, 5))],
            r"batch dimensions of q, k and v do not broadcast: got \(2,\), \(3,\) and \(\)",
        ),
        (with_entry(0, np.nan), "q contains NaN"),
        (with_entry(1, np.nan), "k contains NaN"),
        (with_entry(2, np.nan), "v contains NaN"),
        (with_entry(0, np.inf), "q must be finite: it contains an infinite entry"),
        (with_entry(1, -np.inf), "k must be finite: it contains an infinite entry"),
        (with_entry(2, np.inf), "v must be finite: it contains an infinite entry"),
        (replaced(0, np.ones((2, 3), dtype=complex)), "q must be a real numeric array"),
        (replaced(2, [["a"] * 5] * 4), "v must be a real numeric array: got dtype <U1"),
    ],
)
def test_bad_arrays(args: list[object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        attention(*args)


@pytest.mark.parametrize("temperature", [0.0, -1.0, math.nan, math.inf, -math.inf])
def test_bad_temperature_values(temperature: float) -> None:
    with pytest.raises(ValueError, match="temperature must be a positive finite number: got"):
        attention(*GOOD, temperature=temperature)


@pytest.mark.parametrize("temperature", ["hot", True, None, [1.0]])
def test_bad_temperature_types(temperature: object) -> None:
    with pytest.raises(ValueError, match=r"temperature must be a positive finite number: got "):
        attention(*GOOD, temperature=temperature)


@pytest.mark.parametrize("scale", [math.nan, math.inf, -math.inf, "big", True])
def test_bad_scale(scale: object) -> None:
    with pytest.raises(ValueError, match="scale must be a finite number: got"):
        attention(*GOOD, scale=scale)


@pytest.mark.parametrize(
    ("mask", "message"),
    [
        (np.ones((2, 2), dtype=bool), r"mask of shape \(2, 2\) does not broadcast .*\(2, 4\)"),
        (np.ones((3, 4), dtype=bool), r"mask of shape \(3, 4\) does not broadcast"),
        (np.ones(5, dtype=bool), r"mask of shape \(5,\) does not broadcast"),
        (np.ones((2, 4), dtype=int), "mask must be boolean .*got dtype int"),
        (np.ones((2, 4)), "mask must be boolean .*got dtype float64"),
        ("anticausal", "mask must be a boolean array, \"causal\" or None: got 'anticausal'"),
        ("Causal", "mask must be a boolean array"),
    ],
)
def test_bad_mask(mask: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        attention(*GOOD, mask=mask)


@pytest.mark.parametrize(
    ("bias", "message"),
    [
        (np.full((2, 4), np.nan), "bias contains NaN"),
        (np.full((2, 4), np.inf), r"bias contains \+inf"),
        (np.zeros((3, 4)), r"bias of shape \(3, 4\) does not broadcast to the scores' shape"),
        (np.array(["x"]), "bias must be a real numeric array"),
    ],
)
def test_bad_bias(bias: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        attention(*GOOD, bias=bias)


def test_overflowing_scores_raise() -> None:
    big = np.full((2, 3), 1e30, dtype=np.float32)
    with pytest.raises(ValueError, match="the scores overflowed to infinity"):
        attention(big, big, big)
    with pytest.raises(ValueError, match="the scores overflowed to infinity"):
        attention(*GOOD, scale=1e308)


def test_overflowing_bias_raises() -> None:
    q = np.full((1, 1), 1.7e19, dtype=np.float32)
    assert np.isfinite(q @ q.T).all()
    with pytest.raises(ValueError, match=r"scores \+ bias overflowed to \+inf"):
        attention(q, q, q, scale=1.0, bias=np.array([[3e38]], dtype=np.float32))


def test_scores_logits_validates_like_attention() -> None:
    with pytest.raises(ValueError, match="must share their last dimension d_k: got 2 and 3"):
        scores_logits(np.ones((2, 2)), np.ones((2, 3)))
    with pytest.raises(ValueError, match="k contains NaN"):
        scores_logits(np.ones((2, 2)), np.full((2, 2), np.nan))
    with pytest.raises(ValueError, match="temperature must be a positive finite number"):
        scores_logits(np.ones((2, 2)), np.ones((2, 2)), temperature=0)


@pytest.mark.parametrize(
    ("n_q", "n_k", "message"),
    [
        (0, 3, "n_q must be ≥ 1: got 0"),
        (3, -1, "n_k must be ≥ 1: got -1"),
        (2.5, 3, "n_q must be an integer ≥ 1: got 2.5"),
        (3, True, "n_k must be an integer ≥ 1: got True"),
    ],
)
def test_bad_causal_mask_sizes(n_q: object, n_k: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        causal_mask(n_q, n_k)
