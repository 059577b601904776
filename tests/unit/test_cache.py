"""The persistent provider cache (SPEC 1.5, 1.6): round trip, corruption is a miss, disabling."""
from __future__ import annotations

import hashlib
import json
import os
import signal
import stat
import threading
import time
import warnings
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


# ---------------------------------------------------------------- metadata validation (SPEC 1.6)


def _raw_entry(path: Path, meta: object, payload: bytes = PAYLOAD) -> None:
    """Write a well-framed entry (magic, length, JSON, payload, SHA-256) with arbitrary metadata."""
    encoded = json.dumps(meta).encode()
    body = len(encoded).to_bytes(8, "little") + encoded + payload
    path.write_bytes(cache._MAGIC + body + hashlib.sha256(body).digest())


def _good_meta(key: str, payload: bytes = PAYLOAD) -> dict:
    return {"schema": cache.SCHEMA, "key": key, "ltoir_sha256": hashlib.sha256(payload).hexdigest(),
            "scratch": {"cuda_coop_load_0": [2048, 16]}, "symbols": ["cuda_coop_load_0"]}


_BAD_META = {
    "not a dict": lambda m: ["schema", m["schema"]],
    "no scratch": lambda m: {k: v for k, v in m.items() if k != "scratch"},
    "scratch is a list": lambda m: {**m, "scratch": [["cuda_coop_load_0", 2048, 16]]},
    "scratch value not a pair": lambda m: {**m, "scratch": {"cuda_coop_load_0": [2048]}},
    "scratch size negative": lambda m: {**m, "scratch": {"cuda_coop_load_0": [-1, 16]}},
    "scratch size float": lambda m: {**m, "scratch": {"cuda_coop_load_0": [2048.0, 16]}},
    "scratch size string": lambda m: {**m, "scratch": {"cuda_coop_load_0": ["2048", 16]}},
    "scratch align bool": lambda m: {**m, "scratch": {"cuda_coop_load_0": [2048, True]}},
    "scratch align zero": lambda m: {**m, "scratch": {"cuda_coop_load_0": [2048, 0]}},
    "scratch align not a power of two": lambda m: {**m, "scratch": {"cuda_coop_load_0": [2048, 12]}},
    "scratch symbol empty": lambda m: {**m, "scratch": {"": [2048, 16]}},
    "schema missing": lambda m: {k: v for k, v in m.items() if k != "schema"},
    "schema as string": lambda m: {**m, "schema": str(cache.SCHEMA)},
    "key missing": lambda m: {k: v for k, v in m.items() if k != "key"},
    "key of another entry": lambda m: {**m, "key": _key("other")},
    "ltoir digest missing": lambda m: {k: v for k, v in m.items() if k != "ltoir_sha256"},
    "ltoir digest of other bytes": lambda m: {**m, "ltoir_sha256": hashlib.sha256(b"other").hexdigest()},
    "symbols not a list": lambda m: {**m, "symbols": "cuda_coop_load_0"},
}


def test_a_well_formed_raw_entry_is_a_hit(cache_home):
    key = _key()
    cache_home.mkdir(mode=0o700)
    _raw_entry(_entry(cache_home, key), _good_meta(key))
    loaded = cache.load(key, {"cuda_coop_load_0"})
    assert loaded is not None and loaded[0] == PAYLOAD


@pytest.mark.parametrize("kind", list(_BAD_META))
def test_malformed_metadata_is_a_miss(cache_home, kind):
    key = _key()
    cache_home.mkdir(mode=0o700)
    _raw_entry(_entry(cache_home, key), _BAD_META[kind](_good_meta(key)))
    assert cache.load(key) is None  # never raises, never accepted
    assert cache.load(key, {"cuda_coop_load_0"}) is None


def test_scratch_symbols_must_match_the_requested_providers(cache_home):
    key = _key()
    cache.store(key, PAYLOAD, META)
    cache.forget_memo()
    assert cache.load(key, {"cuda_coop_load_0", "cuda_coop_store_1"}) is None  # one missing
    assert cache.load(key, set()) is None  # one too many
    assert cache.load(key, {"cuda_coop_load_0"})[0] == PAYLOAD
    assert cache.load(key, set()) is None  # the memo is checked too


def test_stored_entries_carry_the_ltoir_digest(cache_home):
    key = _key()
    cache.store(key, PAYLOAD, META)
    cache.forget_memo()
    meta = cache.load(key)[1]
    assert meta["ltoir_sha256"] == hashlib.sha256(PAYLOAD).hexdigest()


class _Blocked(Exception):
    pass


@pytest.fixture
def alarm():
    """Fail instead of hanging if a test opens a FIFO."""
    def on_alarm(*_):
        raise _Blocked("cache.load blocked")  # not an OSError: a blocked open must not pass as a miss
    previous = signal.signal(signal.SIGALRM, on_alarm)
    signal.alarm(10)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, previous)


def test_fifo_entry_is_never_opened(cache_home, alarm, monkeypatch):
    key = _key()
    cache_home.mkdir(mode=0o700)
    os.mkfifo(_entry(cache_home, key))
    opened = []
    real_open = os.open
    monkeypatch.setattr(os, "open", lambda path, *a, **k: opened.append(str(path)) or real_open(path, *a, **k))
    assert cache.load(key) is None
    assert not [p for p in opened if p.endswith(".bin")]


def test_symlinked_entry_is_a_miss(cache_home):
    key = _key("a")
    cache.store(key, PAYLOAD, META)
    cache.forget_memo()
    target = cache_home / "elsewhere.bin"
    _entry(cache_home, key).rename(target)
    _entry(cache_home, key).symlink_to(target)
    assert cache.load(key) is None


# ---------------------------------------------------------------- unsafe directories

@pytest.fixture
def fresh_warnings(monkeypatch):
    monkeypatch.setattr(cache, "_warned_dirs", set())


def test_created_directory_is_private(cache_home):
    cache.store(_key(), PAYLOAD, META)
    assert stat.S_IMODE(os.stat(cache_home).st_mode) == 0o700


@pytest.mark.parametrize("mode", [0o770, 0o707, 0o777, 0o1777])
def test_writable_by_others_directory_is_not_used(cache_home, fresh_warnings, mode):
    key = _key()
    cache.store(key, PAYLOAD, META)  # a good entry exists
    cache.forget_memo()
    os.chmod(cache_home, mode)
    with pytest.warns(UserWarning, match=r"not using the provider cache directory .*(group|world)-writable"):
        assert cache.load(key) is None
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # once per process and directory
        cache.store(_key("b"), PAYLOAD, META)
        assert cache.load(_key("b"))[0] == PAYLOAD  # the memo still works
    assert not _entry(cache_home, _key("b")).exists()


@pytest.mark.skipif(os.geteuid() != 0, reason="chown to another uid needs root")
def test_directory_owned_by_another_user_is_not_used(cache_home, fresh_warnings):
    key = _key()
    cache.store(key, PAYLOAD, META)
    cache.forget_memo()
    os.chown(cache_home, 65534, -1)
    with pytest.warns(UserWarning, match="owned by uid 65534"):
        assert cache.load(key) is None


def test_owned_by_another_user_is_detected_without_root(cache_home, fresh_warnings, monkeypatch):
    key = _key()
    cache.store(key, PAYLOAD, META)
    cache.forget_memo()
    monkeypatch.setattr(os, "geteuid", lambda: os.stat(cache_home).st_uid + 1)
    with pytest.warns(UserWarning, match=r"owned by uid \d+, not by this user"):
        assert cache.load(key) is None


def test_not_created_inside_a_writable_by_others_parent(tmp_path, monkeypatch, fresh_warnings):
    parent = tmp_path / "shared"
    parent.mkdir()
    os.chmod(parent, 0o777)  # no sticky bit: others could swap our directory
    monkeypatch.setenv("XDG_CACHE_HOME", str(parent))
    monkeypatch.delenv("CUDA_COOP_DISABLE_CACHE", raising=False)
    monkeypatch.setattr(cache, "_writes_failed", False)
    cache.forget_memo()
    try:
        with pytest.warns(UserWarning, match="world-writable"):
            cache.store(_key(), PAYLOAD, META)
        assert not (parent / "cuda-coop").exists()
        assert cache.load(_key())[0] == PAYLOAD  # memo only
    finally:
        cache.forget_memo()


def test_unsafe_directory_is_logged(cache_home, fresh_warnings, caplog):
    cache.store(_key(), PAYLOAD, META)
    os.chmod(cache_home, 0o777)
    cache.forget_memo()
    with pytest.warns(UserWarning), caplog.at_level("WARNING", logger="cuda.coop"):
        cache.load(_key())
    assert str(cache_home) in caplog.text


# ---------------------------------------------------------------- per-key lock

def test_lock_excludes_a_second_holder_until_released(cache_home):
    key = _key()
    order = []
    with cache.lock(key) as held:
        assert held
        assert (cache_home / f"{key}.lock").is_file()

        def second():
            with cache.lock(key) as held2:
                order.append(("second", held2))

        thread = threading.Thread(target=second)
        thread.start()
        time.sleep(0.3)
        order.append(("first done", True))
    thread.join(10)
    assert order == [("first done", True), ("second", True)]


def test_lock_times_out_and_lets_the_build_run(cache_home):
    key = _key()
    with cache.lock(key):
        start = time.monotonic()
        with cache.lock(key, timeout=0.3) as held:
            assert not held
        assert 0.25 <= time.monotonic() - start < 5


def test_lock_is_a_no_op_without_a_cache(cache_home, monkeypatch):
    monkeypatch.setenv("CUDA_COOP_DISABLE_CACHE", "1")
    with cache.lock(_key()) as held:
        assert not held
    assert not cache_home.exists()
