"""The persistent provider cache (SPEC 1.5, 1.6): round trip, corruption is a miss, disabling."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from cuda.coop import _config
from cuda.coop._cub import cache

PAYLOAD = b"\x7fELF fake ltoir \x00\x01\x02" * 50
META = {"symbols": ["cuda_coop_load_0"], "scratch": {"cuda_coop_load_0": [2048, 16]}}


@pytest.fixture
def cache_home(tmp_path, monkeypatch):
    """An empty cache root; the memo and the write-failure latch are reset around the test."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.delenv("CUDA_COOP_DISABLE_CACHE", raising=False)
    monkeypatch.setattr(cache, "_writes_failed", False)
    cache.forget_memo()
    yield tmp_path / "cuda-coop"
    cache.forget_memo()


def _key(tag: str = "a") -> str:
    return cache.key("0.1.0", f"source {tag}", "sm_90", "nvrtc 13.0", "nvjitlink 13.0", ["-dlto"], "headers")


def _entry(directory: Path, key: str) -> Path:
    return directory / f"{key}.bin"


def test_cache_dir_follows_xdg(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert _config.cache_dir() == tmp_path / "cuda-coop"
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/dir")  # only absolute paths count
    assert _config.cache_dir() == tmp_path / "home" / ".cache" / "cuda-coop"
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert _config.cache_dir() == tmp_path / "home" / ".cache" / "cuda-coop"


def test_key_is_deterministic_and_sensitive():
    assert _key("a") == _key("a")
    assert _key("a") != _key("b")
    assert len(_key()) == 64 and all(c in "0123456789abcdef" for c in _key())
    assert cache.key("x", "sm_90") != cache.key("x", "sm_100")


def test_round_trip_through_disk(cache_home):
    key = _key()
    assert cache.load(key) is None
    cache.store(key, PAYLOAD, META)
    path = _entry(cache_home, key)
    assert path.is_file()
    assert not [p for p in cache_home.iterdir() if p.name.endswith(".tmp")]  # no temporary left behind
    cache.forget_memo()
    loaded = cache.load(key)
    assert loaded is not None
    payload, meta = loaded
    assert payload == PAYLOAD
    assert meta["symbols"] == META["symbols"]
    assert meta["scratch"] == META["scratch"]
    assert meta["key"] == key and meta["schema"] == cache.SCHEMA


def test_memo_answers_without_disk(cache_home):
    key = _key()
    cache.store(key, PAYLOAD, META)
    _entry(cache_home, key).unlink()
    assert cache.load(key)[0] == PAYLOAD  # in-process memo
    cache.forget_memo()
    assert cache.load(key) is None


def test_other_keys_miss(cache_home):
    cache.store(_key("a"), PAYLOAD, META)
    cache.forget_memo()
    assert cache.load(_key("b")) is None


def _corruptions(data: bytes) -> dict[str, bytes]:
    middle = len(data) // 2
    return {
        "empty": b"",
        "magic only": data[:10],
        "truncated half": data[:middle],
        "truncated digest": data[:-1],
        "flipped payload byte": data[:middle] + bytes([data[middle] ^ 0x01]) + data[middle + 1:],
        "flipped digest byte": data[:-1] + bytes([data[-1] ^ 0xFF]),
        "flipped magic": bytes([data[0] ^ 0x20]) + data[1:],
        "garbage": os.urandom(len(data)),
        "text": b"not a cache entry at all\n" * 20,
        "extra tail": data + b"\x00",
    }


@pytest.mark.parametrize("kind", list(_corruptions(b"x" * 100)))
def test_corrupt_entry_is_a_miss_and_is_rebuilt(cache_home, kind):
    key = _key()
    cache.store(key, PAYLOAD, META)
    path = _entry(cache_home, key)
    path.write_bytes(_corruptions(path.read_bytes())[kind])
    cache.forget_memo()
    assert cache.load(key) is None  # never raises
    cache.store(key, PAYLOAD, META)  # a rebuild overwrites the bad entry
    cache.forget_memo()
    assert cache.load(key)[0] == PAYLOAD


def test_entry_under_another_key_is_a_miss(cache_home):
    a, b = _key("a"), _key("b")
    cache.store(a, PAYLOAD, META)
    _entry(cache_home, b).write_bytes(_entry(cache_home, a).read_bytes())
    cache.forget_memo()
    assert cache.load(b) is None
    assert cache.load(a)[0] == PAYLOAD


def test_schema_mismatch_is_a_miss(cache_home, monkeypatch):
    key, schema = _key(), cache.SCHEMA
    monkeypatch.setattr(cache, "SCHEMA", schema + 1)
    cache.store(key, PAYLOAD, META)
    monkeypatch.setattr(cache, "SCHEMA", schema)
    cache.forget_memo()
    assert cache.load(key) is None


def test_unreadable_entry_is_a_miss(cache_home):
    key = _key()
    _entry(cache_home, key).mkdir(parents=True)  # a directory where the file should be
    assert cache.load(key) is None


def test_failed_write_does_not_raise(tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker))
    monkeypatch.delenv("CUDA_COOP_DISABLE_CACHE", raising=False)
    monkeypatch.setattr(cache, "_writes_failed", False)
    cache.forget_memo()
    try:
        cache.store(_key(), PAYLOAD, META)
        assert cache._writes_failed
        assert cache.load(_key())[0] == PAYLOAD  # the memo still serves this process
    finally:
        cache.forget_memo()


@pytest.mark.parametrize("value", ["1", "true", "YES", " on "])
def test_disable_cache_skips_writes_and_reads(cache_home, monkeypatch, value):
    key = _key()
    monkeypatch.setenv("CUDA_COOP_DISABLE_CACHE", value)
    cache.store(key, PAYLOAD, META)
    assert not cache_home.exists() or not any(cache_home.iterdir())  # nothing written
    cache.forget_memo()
    assert cache.load(key) is None

    # an entry written while enabled is not read while disabled
    monkeypatch.delenv("CUDA_COOP_DISABLE_CACHE")
    cache.store(key, PAYLOAD, META)
    assert _entry(cache_home, key).is_file()
    cache.forget_memo()
    monkeypatch.setenv("CUDA_COOP_DISABLE_CACHE", value)
    assert cache.load(key) is None
    cache.forget_memo()
    monkeypatch.delenv("CUDA_COOP_DISABLE_CACHE")
    assert cache.load(key)[0] == PAYLOAD


@pytest.mark.parametrize("value", ["", "0", "false", "No", " OFF "])
def test_falsy_disable_values_keep_the_cache(cache_home, monkeypatch, value):
    monkeypatch.setenv("CUDA_COOP_DISABLE_CACHE", value)
    key = _key()
    cache.store(key, PAYLOAD, META)
    assert _entry(cache_home, key).is_file()
    cache.forget_memo()
    assert cache.load(key)[0] == PAYLOAD
