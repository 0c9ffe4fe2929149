import json

import pyarrow as pa
import pyarrow.parquet as pq

import verifiers_lite as vf
from tests.helpers.sample_rows import tool_rows
from verifiers_lite.results.export import arrow_batches, arrow_schema


def outputs() -> vf.GenerateOutputs:
    return vf.GenerateOutputs(
        rows=tool_rows(),
        metadata={
            "env_id": "calc",
            "model": "m",
            "rollouts_per_example": 2,
            "num_examples": 2,
            "sampling_args": {"temperature": 0.7},
        },
    )


def test_save_load_round_trip_keeps_messages_as_plain_json(tmp_path):
    out = outputs()
    out.save(tmp_path / "run")
    back = vf.load_results(tmp_path / "run")
    assert back.rows == json.loads(json.dumps(out.rows))
    assert back.metadata == out.metadata
    assert back.rows[0]["completion"][0]["tool_calls"][0]["function"]["name"] == "calculator"


def test_load_results_reads_a_results_path_directory(fake_server, tmp_path):
    from tests.helpers.envs import make_env

    out = make_env(3).evaluate_sync(
        vf.ChatClient(fake_server.base_url),
        "fake-arith",
        rollouts_per_example=2,
        results_path=str(tmp_path / "r"),
        progress=False,
    )
    back = vf.load_results(tmp_path / "r")
    assert len(back) == 6 and back.metadata["model"] == "fake-arith"
    assert sorted(r["trajectory_id"] for r in back.rows) == sorted(
        r["trajectory_id"] for r in out.rows
    )


def test_parquet_and_hf_dataset_accept_tool_calls_and_nested_info(tmp_path):
    out = outputs()
    path = out.to_parquet(tmp_path / "r.parquet")
    table = pq.read_table(path)
    assert table.num_rows == 4
    assert json.loads(table.column("completion")[0].as_py())[0]["tool_calls"][0]["id"] == "c00"
    back = vf.load_results(path)
    assert back.metadata["model"] == "m" and back.rows[1]["prompt"][1]["content"] == "2+2 #0"
    ds = out.to_hf_dataset()
    assert len(ds) == 4 and "correct" in ds.column_names
    assert json.loads(ds[3]["info"])["extra"]["x"][1] == {"y": 2}
    assert json.loads(ds.info.description)["env_id"] == "calc"


def test_arrow_batches_give_one_type_per_column(monkeypatch):
    from verifiers_lite.results import export

    monkeypatch.setattr(export, "BATCH", 2)  # a batch boundary inside these rows
    rows = [
        {"example_id": 0, "reward": 1, "metrics": {"m": "x", "flag": True}},
        {"example_id": 1, "reward": 0.5, "metrics": {"m": 2, "flag": 1}},
        {"example_id": 2, "reward": None, "metrics": {"late": "y"}},
    ]
    schema, json_cols = arrow_schema(rows)
    table = pa.Table.from_batches(list(arrow_batches(rows, schema, json_cols)), schema=schema)
    assert table.num_rows == 3 and table.schema.field("reward").type == pa.float64()
    got = table.to_pylist()
    assert [r["m"] for r in got] == ['"x"', "2", None]  # mixed str/number column becomes JSON text
    assert [r["flag"] for r in got] == ["true", "1", None]  # bool beside int: JSON text too
    assert [r["reward"] for r in got] == [1.0, 0.5, None]
    assert [r["late"] for r in got] == [None, None, "y"]  # a column first seen late is empty before


def test_repr_html_is_self_contained_and_complete():
    h = outputs()._repr_html_()
    assert "<script" not in h and "<style" not in h and "style=" in h
    for text in (
        "calc",
        "mean reward",
        "0.500",
        "correct",
        "model_api",
        "First 4 of 4 rows",
        "HTTP 500 &lt;boom&gt;",
    ):
        assert text in h, text
    assert "[tool calls: 1]" not in h  # the last assistant message with content is shown
    assert "rollouts=4" in repr(outputs())


def test_repr_html_of_empty_outputs():
    h = vf.GenerateOutputs(rows=[], metadata={})._repr_html_()
    assert "no rows" in h


def test_repr_html_without_the_notebook_layer_is_escaped_repr_text(monkeypatch):
    from verifiers_lite.results import outputs as outputs_module

    monkeypatch.delitem(outputs_module._VIEWER, "repr_html")
    out = vf.GenerateOutputs(rows=tool_rows(), metadata={"env_id": "<calc>", "model": "m"})
    h = out._repr_html_()
    assert h.startswith("<pre>") and h.endswith("</pre>")
    assert "env=&#x27;&lt;calc&gt;&#x27;" in h and "<calc>" not in h  # the repr, escaped
    assert "<table" not in h
