"""Files: typed records, atomic JSONL appends and rewrites, the run directory and its lock, line indexes
of answers and judgments, the usage log, where data lives.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from jurist import lazy_face

if TYPE_CHECKING:
    from jurist.store.archive import pack, unpack
    from jurist.store.jsonl import (
        JsonlAppender,
        iter_jsonl,
        iter_jsonl_lines,
        iter_numbered_jsonl,
        jsonl_line,
        parse_jsonl_bytes,
        parse_jsonl_line,
        read_input_jsonl,
        read_jsonl_line,
        read_line_at,
        rewrite_jsonl_atomic,
        rewrite_lines_atomic,
        write_json_atomic,
    )
    from jurist.store.line_index import AnswerIndex, JudgmentIndex, answer_text
    from jurist.store.locations import DATA_DIR_ENV, cache_root, data_dirs
    from jurist.store.lock import LOCK_NAME, RunDirLock, is_held
    from jurist.store.records import (
        AnswerRecord,
        PointRecord,
        Question,
        RunJson,
        Usage,
        answer_record,
        category_field,
        content_text,
        id_field,
        judgment_kind,
        sample_of,
        text_hash,
    )
    from jurist.store.run_dir import CRASHED, RunDir, file_stem, plain_stem
    from jurist.store.usage import (
        UsageLog,
        add_usage,
        booked_batch_lines,
        iter_usage_log,
        usage_log_path,
        usage_record_problem,
    )

_HOMES = {
    "pack": "archive",
    "unpack": "archive",
    "JsonlAppender": "jsonl",
    "iter_jsonl": "jsonl",
    "iter_jsonl_lines": "jsonl",
    "iter_numbered_jsonl": "jsonl",
    "parse_jsonl_bytes": "jsonl",
    "parse_jsonl_line": "jsonl",
    "read_input_jsonl": "jsonl",
    "read_jsonl_line": "jsonl",
    "read_line_at": "jsonl",
    "rewrite_jsonl_atomic": "jsonl",
    "rewrite_lines_atomic": "jsonl",
    "jsonl_line": "jsonl",
    "write_json_atomic": "jsonl",
    "AnswerIndex": "line_index",
    "JudgmentIndex": "line_index",
    "answer_text": "line_index",
    "DATA_DIR_ENV": "locations",
    "cache_root": "locations",
    "data_dirs": "locations",
    "LOCK_NAME": "lock",
    "RunDirLock": "lock",
    "is_held": "lock",
    "AnswerRecord": "records",
    "PointRecord": "records",
    "Question": "records",
    "RunJson": "records",
    "Usage": "records",
    "answer_record": "records",
    "category_field": "records",
    "content_text": "records",
    "id_field": "records",
    "judgment_kind": "records",
    "sample_of": "records",
    "text_hash": "records",
    "CRASHED": "run_dir",
    "RunDir": "run_dir",
    "file_stem": "run_dir",
    "plain_stem": "run_dir",
    "add_usage": "usage",
    "booked_batch_lines": "usage",
    "UsageLog": "usage",
    "iter_usage_log": "usage",
    "usage_log_path": "usage",
    "usage_record_problem": "usage",
}

__getattr__ = lazy_face(__name__, _HOMES)


__all__ = [
    "pack",
    "unpack",
    "CRASHED",
    "AnswerIndex",
    "AnswerRecord",
    "DATA_DIR_ENV",
    "JsonlAppender",
    "JudgmentIndex",
    "LOCK_NAME",
    "PointRecord",
    "Question",
    "RunDir",
    "RunDirLock",
    "RunJson",
    "Usage",
    "UsageLog",
    "add_usage",
    "booked_batch_lines",
    "answer_record",
    "answer_text",
    "cache_root",
    "category_field",
    "content_text",
    "data_dirs",
    "file_stem",
    "id_field",
    "is_held",
    "iter_jsonl",
    "iter_jsonl_lines",
    "iter_numbered_jsonl",
    "jsonl_line",
    "judgment_kind",
    "parse_jsonl_bytes",
    "parse_jsonl_line",
    "plain_stem",
    "iter_usage_log",
    "read_input_jsonl",
    "read_jsonl_line",
    "read_line_at",
    "rewrite_jsonl_atomic",
    "rewrite_lines_atomic",
    "sample_of",
    "text_hash",
    "usage_log_path",
    "usage_record_problem",
    "write_json_atomic",
]
