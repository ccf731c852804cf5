"""Human-voted arena battles (LMArena 100k/140k, or a local file): loading, unifying, filtering, sampling.

Every source is read into one shape, JudgeArena's unified schema (``question_id, model_a, model_b, winner,
conversation_a, conversation_b, lang``), and only single-turn battles are kept: the evaluated model answers
the first user turn and nothing else, so a longer conversation could not be compared fairly.

The Hub datasets are fetched with ``huggingface_hub.snapshot_download`` at a pinned commit (parquet files
only) into jurist's cache; ``$JURIST_DATA_DIR/<name>/`` (a folder of parquet files, or a ``data/`` one in
it) is used instead when it exists, so an offline machine reads the same files through the same code.
Conversations are read lazily from parquet: the whole arena's model names and winners are needed for the
human anchors, but the texts only for the sampled battles.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jurist.benchmarks.data_files import cache_dir, data_dirs
from jurist.errors import InputError, JuristError

WINNERS = ("model_a", "model_b", "tie", "tie (bothbad)")
"""The human verdicts of the unified schema (140k's ``both_bad`` is read as ``tie (bothbad)``)."""

UNIFIED_COLUMNS = ("question_id", "model_a", "model_b", "winner", "conversation_a", "conversation_b", "lang")


@dataclass(frozen=True)
class HubArena:
    """One arena dataset on the Hugging Face Hub at a pinned commit."""

    name: str
    repo_id: str
    revision: str
    label: str
    """The arena's name in JudgeArena's reports (``LMArena-100k``)."""


HUB_ARENAS: dict[str, HubArena] = {
    "lmarena-100k": HubArena(
        "lmarena-100k",
        "lmarena-ai/arena-human-preference-100k",
        "72e85b3ddc9c81bf7b659d6b03d4126dfd8fb34a",
        "LMArena-100k",
    ),
    "lmarena-140k": HubArena(
        "lmarena-140k",
        "lmarena-ai/arena-human-preference-140k",
        "6322995ab34d7c2693e3f47dd13fa5caa0789a74",
        "LMArena-140k",
    ),
}

# Full language names some arena exports use, as the ISO 639-1 codes of the unified schema.
_LANGUAGE_CODES = {
    "english": "en",
    "german": "de",
    "french": "fr",
    "spanish": "es",
    "italian": "it",
    "portuguese": "pt",
    "russian": "ru",
    "chinese": "zh",
    "japanese": "ja",
    "korean": "ko",
    "polish": "pl",
    "dutch": "nl",
    "vietnamese": "vi",
    "arabic": "ar",
    "turkish": "tr",
    "ukrainian": "uk",
    "indonesian": "id",
    "czech": "cs",
    "hungarian": "hu",
    "persian": "fa",
}


def language_code(value: Any) -> str:
    """``en`` for ``en``, ``EN`` or ``English``; other names lower-cased; ``unknown`` for none."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "unknown"
    text = str(value).strip().lower()
    return _LANGUAGE_CODES.get(text, text) or "unknown"


def turn_text(turn: Any) -> str:
    """The text of one conversation turn: a string (100k) or a list of typed blocks (140k)."""
    content = turn.get("content") if isinstance(turn, dict) else None
    if isinstance(content, str):
        return content
    if isinstance(content, (list, tuple)):
        return " ".join(
            str(block.get("text") or "")
            for block in content
            if isinstance(block, dict) and block.get("type", "text") == "text"
        )
    return ""


def single_turn(conversation: Any) -> tuple[str, str] | None:
    """(prompt, answer) of a one-question conversation (user then assistant), else None."""
    if not isinstance(conversation, (list, tuple)) or len(conversation) != 2:
        return None
    return turn_text(conversation[0]), turn_text(conversation[1])


@dataclass(frozen=True)
class ArenaTable:
    """The single-turn battles of an arena, columns as lists; texts read on demand by row index.

    ``texts(rows)`` returns, per row, (prompt, answer of model_a, answer of model_b).
    """

    label: str
    source: str
    question_id: list[str]
    model_a: list[str]
    model_b: list[str]
    winner: list[str]
    lang: list[str]
    texts: Callable[[Sequence[int]], list[tuple[str, str, str]]]
    n_rows_read: int
    """Rows before the single-turn filter (and before rows without a valid winner were dropped)."""

    def __len__(self) -> int:
        return len(self.question_id)


# ----------------------------------------------------------------------------------------------------
# Reading


def _winner(value: Any) -> str | None:
    text = str(value) if value is not None else ""
    text = "tie (bothbad)" if text == "both_bad" else text
    return text if text in WINNERS else None


def read_jsonl_arena(path: Path, label: str | None = None) -> ArenaTable:
    """A JSONL file in the unified schema (``lang`` or ``language`` optional)."""
    from jurist.store import parse_jsonl_bytes

    ids: list[str] = []
    a: list[str] = []
    b: list[str] = []
    winners: list[str] = []
    langs: list[str] = []
    texts: list[tuple[str, str, str]] = []
    n_read = 0
    opener = _open_text(path)
    for number, record in parse_jsonl_bytes(path, opener):
        n_read += 1
        for name in ("model_a", "model_b", "winner", "conversation_a", "conversation_b"):
            if name not in record:
                raise InputError(path, f"line {number}", f"field {name!r} is missing")
        winner = _winner(record["winner"])
        one_a, one_b = single_turn(record["conversation_a"]), single_turn(record["conversation_b"])
        if winner is None or one_a is None or one_b is None:
            continue
        qid = record.get("question_id", record.get("id"))
        ids.append(str(qid) if qid is not None else f"line-{number}")
        a.append(str(record["model_a"]))
        b.append(str(record["model_b"]))
        winners.append(winner)
        langs.append(language_code(record.get("lang", record.get("language"))))
        texts.append((one_a[0], one_a[1], one_b[1]))
    if not ids:
        raise InputError(path, "", "no single-turn arena battles in this file")
    return ArenaTable(
        label or path.name,
        str(path),
        ids,
        a,
        b,
        winners,
        langs,
        lambda rows: [texts[i] for i in rows],
        n_read,
    )


def _open_text(path: Path) -> bytes:
    if path.name.endswith(".gz"):
        import gzip

        return gzip.decompress(path.read_bytes())
    return path.read_bytes()


def _pyarrow() -> Any:
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise JuristError(
            "reading arena parquet files needs pyarrow: pip install pyarrow (or a JSONL file in the "
            "unified schema)"
        ) from None
    return pq


def read_parquet_arena(files: Sequence[Path], label: str, source: str) -> ArenaTable:
    """Parquet files of one arena (the Hub's ``data/*.parquet``, or one local file), lazily.

    Model names, winners, ids and languages of every row are read at once; conversations stay in Arrow
    memory and become Python text only for the rows asked for.
    """
    pq = _pyarrow()
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    if not files:
        raise JuristError(f"{source}: no parquet files")
    try:
        table = pa.concat_tables([pq.read_table(str(f)) for f in files], promote_options="default")
    except (OSError, pa.ArrowInvalid) as exc:
        raise InputError(source, "", f"not readable as parquet ({exc})") from None
    names = set(table.column_names)
    for column in ("model_a", "model_b", "winner", "conversation_a", "conversation_b"):
        if column not in names:
            raise InputError(source, "", f"column {column!r} is missing")
    n_read = table.num_rows
    len_a = pc.fill_null(pc.list_value_length(table["conversation_a"]), 0).to_numpy(zero_copy_only=False)
    len_b = pc.fill_null(pc.list_value_length(table["conversation_b"]), 0).to_numpy(zero_copy_only=False)
    winners_all = [_winner(w) for w in table["winner"].to_pylist()]
    keep = np.flatnonzero((len_a == 2) & (len_b == 2) & np.array([w is not None for w in winners_all]))
    kept = table.take(pa.array(keep, type=pa.int64()))
    id_column = "question_id" if "question_id" in names else "id" if "id" in names else None
    ids = [str(v) for v in kept[id_column].to_pylist()] if id_column else [f"row-{int(i)}" for i in keep]
    lang_column = "lang" if "lang" in names else "language" if "language" in names else None
    langs = (
        [language_code(v) for v in kept[lang_column].to_pylist()] if lang_column else ["unknown"] * len(keep)
    )
    conversations = kept.select(["conversation_a", "conversation_b"])

    def texts(rows: Sequence[int]) -> list[tuple[str, str, str]]:
        chosen = conversations.take(pa.array(list(rows), type=pa.int64())).to_pylist()
        out = []
        for row in chosen:
            one_a, one_b = single_turn(row["conversation_a"]), single_turn(row["conversation_b"])
            assert one_a is not None and one_b is not None  # rows were filtered on length
            out.append((one_a[0], one_a[1], one_b[1]))
        return out

    return ArenaTable(
        label,
        source,
        ids,
        [str(v) for v in kept["model_a"].to_pylist()],
        [str(v) for v in kept["model_b"].to_pylist()],
        [str(winners_all[int(i)]) for i in keep],
        langs,
        texts,
        n_read,
    )


def read_arena_file(path: Path) -> ArenaTable:
    """A local arena file: ``.parquet``, or ``.jsonl``/``.jsonl.gz`` in the unified schema."""
    if path.suffix == ".parquet":
        return read_parquet_arena([path], path.stem, str(path))
    return read_jsonl_arena(path, path.name.removesuffix(".gz").removesuffix(".jsonl"))


# ----------------------------------------------------------------------------------------------------
# Where a Hub arena's files are


def local_parquet_files(arena: HubArena) -> list[Path] | None:
    """The arena's parquet files under ``$JURIST_DATA_DIR``: ``<name>/``, ``<name>/data/``, or the repo's
    own name (``arena-human-preference-100k/``), first match wins."""
    for folder in data_dirs():
        for relative in (arena.name, arena.repo_id.split("/")[-1]):
            for base in (folder / relative / "data", folder / relative):
                files = sorted(base.glob("*.parquet")) if base.is_dir() else []
                if files:
                    return files
    return None


def _offline_hint(arena: HubArena) -> str:
    return f"put its parquet files in a --data-dir folder as {arena.name}/*.parquet ($JURIST_DATA_DIR)"


def cached_snapshot_files(arena: HubArena, cache: Path | None = None) -> list[Path] | None:
    """The arena's parquet files in the hub cache jurist downloads into, if there (for ``jurist list``)."""
    from jurist.benchmarks.hub import cached_snapshot

    return cached_snapshot(arena.repo_id, arena.revision, "*.parquet", cache or cache_dir() / "hf")


def hub_parquet_files(arena: HubArena, *, cache: Path | None = None) -> list[Path]:
    """``data/*.parquet`` of the arena's dataset at its pinned commit, downloaded once into the cache
    (offline: the hub cache, else one line at once: :func:`jurist.benchmarks.hub.snapshot_files`)."""
    from jurist.benchmarks.hub import snapshot_files

    target = cache or cache_dir() / "hf"
    return snapshot_files(
        arena.name, arena.repo_id, arena.revision, "*.parquet", target, _offline_hint(arena)
    )


def load_hub_arena(arena: HubArena) -> ArenaTable:
    """A Hub arena from ``$JURIST_DATA_DIR`` if a copy is there, else from the pinned snapshot."""
    local = local_parquet_files(arena)
    files = local if local is not None else hub_parquet_files(arena)
    where = str(files[0].parent) if local is not None else f"hf://datasets/{arena.repo_id}@{arena.revision}"
    return read_parquet_arena(files, arena.label, where)


# ----------------------------------------------------------------------------------------------------
# Choosing battles


def parse_languages(value: str | None) -> tuple[str, ...]:
    """``-B languages=en,de`` as codes (``all`` or nothing: no filter)."""
    if not value or value.strip().lower() == "all":
        return ()
    return tuple(dict.fromkeys(language_code(part) for part in value.split(",") if part.strip()))


def sample_rows(candidates: Sequence[int], n: int, seed: int) -> list[int]:
    """``n`` of ``candidates`` drawn without replacement by a seeded generator (all, in order, if fewer)."""
    if n >= len(candidates):
        return list(candidates)
    import numpy as np  # here, not at the top: every --bench PATH reaches this module to look at its file

    rng = np.random.default_rng(seed)
    picked = rng.choice(len(candidates), size=n, replace=False)
    return [int(candidates[int(i)]) for i in picked]


def fingerprint(ids: Sequence[str]) -> str:
    """sha256 of the chosen question ids in order: two runs judged the same battles iff these agree."""
    return hashlib.sha256("\n".join(ids).encode("utf-8")).hexdigest()


def side_draws(n: int, seed: int) -> tuple[list[bool], list[bool]]:
    """Per sampled battle: whether the arena's model_a side is the opponent, and whether the evaluated
    model is shown first; one seeded stream, apart from the one that sampled the battles."""
    import numpy as np

    rng = np.random.default_rng([seed, 1])
    opponent_is_a = rng.random(n) < 0.5
    model_first = rng.random(n) < 0.5
    return [bool(x) for x in opponent_is_a], [bool(x) for x in model_first]
