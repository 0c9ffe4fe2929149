"""build_training_batch: training fields, label convention, explicit padding and truncation."""

from __future__ import annotations

import pytest

from verifiers_lite.rollout import IGNORE_INDEX, MultiTurnRollout, SamplingParams
from verifiers_lite.rollout.testing import ScriptedSampler, toy_template
from verifiers_lite.rollout.training import build_training_batch, training_view

X = IGNORE_INDEX

ROWS = [
    {
        "prompt_ids": [1, 2],
        "completion_ids": [3, 4, 5],
        "completion_mask": [1, 0, 1],
        "completion_logprobs": [-0.1, 0.0, -0.3],
        "advantage": 0.5,
    },
    {
        "prompt_ids": [7],
        "completion_ids": [8, 9, 10],
        "completion_mask": [1, 0, 1],
        "completion_logprobs": [-0.2, 0.0, -0.4],
    },
]


def test_fields_and_unshifted_convention() -> None:
    b = build_training_batch(ROWS)
    assert b["input_ids"] == [[1, 2, 3, 4, 5], [7, 8, 9, 10]]
    assert b["labels"] == [[X, X, 3, X, 5], [X, 8, X, 10]]
    assert b["logprobs"] == [[0.0, 0.0, -0.1, 0.0, -0.3], [0.0, -0.2, 0.0, -0.4]]
    assert b["attention_mask"] == [[1] * 5, [1] * 4]
    assert b["position_ids"] == [[0, 1, 2, 3, 4], [0, 1, 2, 3]]
    assert b["lengths"] == [5, 4] and b["truncated"] == [False, False]
    assert b["advantages"] == [0.5, 0.0]


def test_shifted_labels_are_next_token_aligned() -> None:
    b = build_training_batch(ROWS, shift_labels=True)
    # Position i carries token i+1's label and logprob; the last position has none.
    assert b["labels"] == [[X, 3, X, 5, X], [8, X, 10, X]]
    assert b["logprobs"] == [[0.0, -0.1, 0.0, -0.3, 0.0], [-0.2, 0.0, -0.4, 0.0]]
    assert b["input_ids"] == [[1, 2, 3, 4, 5], [7, 8, 9, 10]]  # ids never move


def test_padding_is_right_and_explicit() -> None:
    b = build_training_batch(ROWS, pad_to_longest=True, pad_token_id=99)
    assert b["input_ids"][1] == [7, 8, 9, 10, 99]
    assert b["labels"][1] == [X, 8, X, 10, X]
    assert b["logprobs"][1] == [0.0, -0.2, 0.0, -0.4, 0.0]
    assert b["attention_mask"][1] == [1, 1, 1, 1, 0]
    assert b["position_ids"][1] == [0, 1, 2, 3, 0]
    assert b["lengths"] == [5, 4]  # real lengths, padding excluded


def test_truncation_errors_by_default_and_cuts_when_asked() -> None:
    with pytest.raises(ValueError, match=r"max_length=4 .*\(0, 5\)"):
        build_training_batch(ROWS, max_length=4)
    b = build_training_batch(ROWS, max_length=4, truncation="right", pad_to_longest=True)
    assert b["input_ids"] == [[1, 2, 3, 4], [7, 8, 9, 10]]
    assert b["labels"][0] == [X, X, 3, X]
    assert b["truncated"] == [True, False] and b["lengths"] == [4, 4]
    with pytest.raises(ValueError, match="truncation"):
        build_training_batch(ROWS, truncation="left")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="max_length"):
        build_training_batch(ROWS, max_length=0)


def test_rollout_rows_carry_training_fields_and_batch_aligns_logprobs() -> None:
    template = toy_template()
    sampler = ScriptedSampler(template, lambda p: "ok")
    rollout = MultiTurnRollout(sampler, template, sampling_params=SamplingParams(logprobs=0))
    (t,) = rollout([[{"role": "user", "content": "q"}]])
    # One stored layout: the row's. The training view is derived, the same as the batch's row.
    assert not {"input_ids", "labels", "logprobs", "attention_mask", "position_ids"} & t.keys()
    b = build_training_batch([t])
    view = training_view(t)
    assert set(view) == {"input_ids", "labels", "logprobs", "attention_mask", "position_ids"}
    assert all(view[k] == b[k][0] for k in view)  # type: ignore[literal-required]
    prompt = template.encode_messages([{"role": "user", "content": "q"}])
    n = (
        len(prompt) + len(template.encode("ok")) + 2
    )  # prompt, "ok", <|im_end|> sampled, "\n" closed
    assert view["input_ids"][: len(prompt)] == prompt and len(view["input_ids"]) == n
    assert view["attention_mask"] == [1] * n and view["position_ids"] == list(range(n))
    sampled_at = [i for i, lab in enumerate(b["labels"][0]) if lab != X]
    assert [b["input_ids"][0][i] for i in sampled_at] == template.encode("ok") + [2]
    # ScriptedSampler's logprob of token t is -((t % 7) + 1) / 10: check the alignment.
    expected = [-((tok % 7) + 1) / 10 for tok in template.encode("ok") + [2]]
    assert [b["logprobs"][0][i] for i in sampled_at] == pytest.approx(expected)


def test_generate_outputs_passes_batch_options() -> None:
    import verifiers_lite as vf
    from verifiers_lite.rollout import TokenClient

    template = toy_template()
    env = vf.SingleTurnEnv(dataset=[{"question": "q", "answer": "a"}])
    client = TokenClient(ScriptedSampler(template, lambda p: "ok"), template)
    out = env.evaluate_sync(client, "toy", progress=False)
    plain = out.to_training_batch()
    shifted = out.to_training_batch(shift_labels=True, max_length=5, truncation="right")
    assert shifted["input_ids"] == [plain["input_ids"][0][:5]]
    assert shifted["labels"] == [plain["labels"][0][1:5] + [X]]
    assert plain["position_ids"] == [list(range(plain["lengths"][0]))]
