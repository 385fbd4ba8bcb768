"""Tests of rnnlib.records (recorded runs and their fingerprints) and of chapter 11's record."""

from __future__ import annotations

import json
import math

import pytest

from rnnlib import data, records
from rnnlib import next_step as ns
from rnnlib.experiments import ch11


@pytest.fixture(scope="module")
def jsb():
    return data.load_jsb()


@pytest.fixture(scope="module")
def abc():
    return data.load_abc_text()


@pytest.fixture(scope="module")
def smoke_fp(jsb, abc):
    """The fingerprint at the smoke config, computed once for the tests that compare with it."""
    return ch11.fingerprint(jsb, abc, ch11.SMOKE)


def test_stale_message_and_record_path():
    assert records.stale_message(11) == (
        "the recorded runs of chapter 11 are stale: run `make record CH=11`"
    )
    assert records.record_path(11).name == "ch11.json"
    assert records.record_path(11).parent.name == "records"
    for bad in (0, 100, "11", True):
        with pytest.raises((ValueError, TypeError), match="^chapter must be"):
            records.stale_message(bad)


def test_fingerprint_difference_tolerance():
    a = {
        "x": [1.0, 2.0],
        "y": {"z": 3.0, "s": "abc"},
        "n": math.nan,
    }
    same = {
        "x": [1.0, 2.0 * (1 + 1e-12)],
        "y": {"z": 3.0, "s": "abc"},
        "n": math.nan,
    }
    assert records.fingerprint_difference(a, same) == []
    moved = {
        "x": [1.0, 2.0 * (1 + 1e-6)],
        "y": {"z": 3.0, "s": "abc"},
        "n": math.nan,
    }
    assert len(records.fingerprint_difference(a, moved)) == 1
    renamed = {
        "x": [1.0, 2.0],
        "y": {"z": 3.0, "s": "abd"},
        "n": math.nan,
    }
    assert records.fingerprint_difference(a, renamed)
    assert records.fingerprint_difference(a, {"x": [1.0, 2.0]})
    with pytest.raises(TypeError, match="stored"):
        records.fingerprint_difference([], a)
    with pytest.raises(ValueError, match="rtol"):
        records.fingerprint_difference(a, a, rtol=-1)


def test_write_read_and_check(tmp_path):
    prov = records.provenance(
        "make record CH=11",
        device="cpu",
        wall_seconds=1.0,
        cpu_seconds=2.0,
    )
    assert {
        "commit",
        "date",
        "torch",
        "cpu",
        "wall_seconds",
        "cpu_seconds",
    } <= set(prov)
    path = records.write_record(
        tmp_path / "r.json",
        config={"a": 1},
        results={"b": [1.5]},
        fingerprint={"f": [0.25, 0.5]},
        provenance=prov,
        scale="smoke",
    )
    rec = records.read_record(path)
    assert rec["results"] == {"b": [1.5]} and rec["scale"] == "smoke"
    assert records.check_fingerprint(rec, {"f": [0.25, 0.5]}, 11) == 0.0
    with pytest.raises(records.StaleRecordError) as err:
        records.check_fingerprint(rec, {"f": [0.25, 0.51]}, 11)
    assert str(err.value).startswith(records.stale_message(11))
    line = records.provenance_line(rec, 11)
    assert "CPU-minutes" in line and "`make record CH=11` re-runs it" in line
    with pytest.raises(FileNotFoundError, match="path"):
        records.read_record(tmp_path / "missing.json")
    (tmp_path / "bad.json").write_text(json.dumps({"config": {}}))
    with pytest.raises(ValueError, match="not a record"):
        records.read_record(tmp_path / "bad.json")
    with pytest.raises(ValueError, match="scale"):
        records.write_record(
            tmp_path / "x.json",
            config={},
            results={},
            fingerprint={},
            provenance=prov,
            scale="huge",
        )
    with pytest.raises(ValueError, match="cpu_seconds"):
        records.provenance("c", device="cpu", wall_seconds=1, cpu_seconds=-1)


def test_build_record_times_the_run_and_writes_the_fingerprint(
    tmp_path,
):
    seen = []

    def run(cfg):
        seen.append("run")
        return {"rows": [cfg["a"] * 2]}

    def fingerprint(cfg):
        seen.append("fp")
        return {"f": [cfg["a"] + 0.5]}

    path = records.build_record(
        6,
        tmp_path / "r.json",
        config={"a": 3},
        run=run,
        fingerprint=fingerprint,
        smoke=True,
        worker_cpu=lambda results: 100.0 * len(results["rows"]),
    )
    rec = records.read_record(path)
    assert seen == ["run", "fp"]
    assert rec["results"] == {"rows": [6]}
    assert rec["fingerprint"] == {"f": [3.5]}
    assert rec["config"] == {"a": 3} and rec["scale"] == "smoke"
    prov = rec["provenance"]
    assert prov["command"] == "make record CH=06"
    assert prov["device"] == "cpu"
    # the workers' CPU seconds are added to this process's
    assert 100.0 <= prov["cpu_seconds"] < 110.0
    # a smoke record never goes to the committed path
    with pytest.raises(ValueError, match="path"):
        records.build_record(
            6,
            None,
            config={"a": 3},
            run=run,
            fingerprint=fingerprint,
            smoke=True,
        )
    assert seen == ["run", "fp"]


def test_changing_adam_beta_makes_the_record_stale(jsb, abc, smoke_fp, monkeypatch):
    """A training constant changed after the record was made fails the fingerprint check."""
    rec = {"config": ch11.SMOKE, "fingerprint": smoke_fp}
    assert ch11.check_record(rec, jsb, abc) == 0.0
    monkeypatch.setattr(ns, "ADAM_BETAS", (0.8, 0.999))
    with pytest.raises(records.StaleRecordError) as err:
        ch11.check_record(rec, jsb, abc)
    assert str(err.value).startswith(
        "the recorded runs of chapter 11 are stale: run `make record CH=11`"
    )


def test_changing_the_config_makes_the_record_stale(jsb, abc, smoke_fp):
    other = json.loads(json.dumps(ch11.SMOKE))
    other["music"]["patience"] = 7
    with pytest.raises(records.StaleRecordError):
        ch11.check_record({"config": other, "fingerprint": smoke_fp}, jsb, abc)


def _without_cpu_seconds(d):
    if isinstance(d, dict):
        return {k: _without_cpu_seconds(v) for k, v in d.items() if k != "cpu_seconds"}
    return d


def test_smoke_record_runs_to_a_temporary_path(tmp_path, jsb, abc):
    """CI's smoke run of the record command: seconds, never over the committed record.

    Its models train in two worker processes; each depends only on its own seed, so
    one process gives the same results (CPU seconds aside).
    """
    path = ch11.make_record(
        tmp_path / "ch11.json",
        smoke=True,
        jobs=2,
        log=lambda s: None,
    )
    rec = records.read_record(path)
    one = ch11.run_record(jsb, abc, ch11.SMOKE, log=lambda s: None)
    assert json.dumps(
        _without_cpu_seconds(json.loads(json.dumps(one))),
        sort_keys=True,
    ) == json.dumps(_without_cpu_seconds(rec["results"]), sort_keys=True)
    with pytest.raises(ValueError, match="jobs"):
        ch11.run_record(jsb, abc, ch11.SMOKE, jobs=0)
    assert rec["scale"] == "smoke"
    assert set(rec["results"]["music"]["0"]) == set(ch11.VARIANTS)
    row = rec["results"]["music"]["0"]["lstm authors"]
    assert 0 < row["forget"]["max"] <= 1 and row["best_step"] <= row["last_step"]
    assert rec["results"]["text"]["0"]["rnn stable"]["lambda"] < 1
    with pytest.raises(ValueError, match="path"):
        ch11.make_record(None, smoke=True)
    with pytest.raises(ValueError, match="committed"):
        ch11.make_record(records.record_path(11), smoke=True)


def test_the_committed_record_is_full_and_fresh(jsb, abc):
    rec = ch11.load_record()
    assert rec["scale"] == "full"
    assert ch11.check_record(rec, jsb, abc) < records.FINGERPRINT_RTOL
    music = rec["results"]["music"]
    assert len(music) >= 5
    for rows in music.values():
        for row in rows.values():
            assert row["best_step"] < row["last_step"]


def test_paired_differences_and_sign_test():
    out = ch11.paired([1.0, 2.0, 3.0, 4.0, 5.0], [2.0, 3.0, 4.0, 5.0, 6.5])
    assert out["n_neg"] == 5 and out["n_pos"] == 0
    assert out["p_sign"] == pytest.approx(2 / 32)
    assert out["lo"] < out["mean"] < out["hi"] < 0
    assert out["mean"] == pytest.approx(-1.1)
    with pytest.raises(ValueError, match=r"len\(a\) >= 2"):
        ch11.paired([1.0], [2.0])
