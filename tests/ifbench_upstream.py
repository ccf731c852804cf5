"""Run allenai/IFBench's own scoring code (kept at two commits in ``../shared/data/ifbench/upstream-code``)
on a question file and a response file, and print its verdict on every instruction as JSON.

Run as a script in a subprocess, one commit per process (both commits have top-level modules of the same
names): ``python ifbench_upstream.py COMMIT CODE_DIR WORK_DIR QUESTIONS RESPONSES``. The code is copied
into ``WORK_DIR`` first (``db69a6f`` creates a ``.nltk_data`` folder beside itself at import; the shared
copy is read-only) and imported from there unchanged. Three things this environment lacks are stood in
for, none of them read by any IFBench checker:

* ``nltk.download`` does nothing: offline it would only fail; the data comes from ``$NLTK_DATA``.
* ``spacy`` (``c94da02`` imports it and downloads ``en_core_web_sm`` at import; no checker uses the
  model) is an empty module, as SOURCE.md there advises. Not in requirements.lock.
* ``immutabledict`` (``instructions_util``'s read-only tables of languages for IFEval's language check)
  is a read-only mapping when the package is not installed. Not in requirements.lock.

Each instruction is scored alone through upstream's ``test_instruction_following_strict`` then
``_loose`` (in ``run_eval``'s order: strict first, which drops ``None`` arguments in place), so a crash is
pinned to its instruction: ``{"strict": bool, "loose": bool}`` or ``{"crash": "ExceptionType: ..."}``.
"""

from __future__ import annotations

import json
import random
import shutil
import sys
import types
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any


def _stand_ins() -> None:
    import nltk

    nltk.download = lambda *args, **kwargs: False  # type: ignore[assignment]
    spacy = types.ModuleType("spacy")
    spacy_cli = types.ModuleType("spacy.cli")
    spacy_cli.download = lambda *args, **kwargs: None  # type: ignore[attr-defined]
    spacy.cli = spacy_cli  # type: ignore[attr-defined]
    spacy.load = lambda *args, **kwargs: None  # type: ignore[attr-defined]
    sys.modules.setdefault("spacy", spacy)
    sys.modules.setdefault("spacy.cli", spacy_cli)
    try:
        import immutabledict  # noqa: F401
    except ImportError:
        frozen = types.ModuleType("immutabledict")
        frozen.immutabledict = lambda *a, **k: types.MappingProxyType(dict(*a, **k))  # type: ignore[attr-defined]
        sys.modules["immutabledict"] = frozen


def _verdicts(lib: Any, inp: Any, prompt_to_response: Mapping[str, str]) -> Iterator[dict[str, Any]]:
    for index, instruction_id in enumerate(inp.instruction_id_list):
        one = lib.InputExample(
            key=inp.key,
            instruction_id_list=[instruction_id],
            prompt=inp.prompt,
            kwargs=[dict(inp.kwargs[index])],
        )
        random.seed(0)  # an argument upstream draws at random (c94da02: a falsy index) is drawn alike
        try:
            strict = lib.test_instruction_following_strict(one, prompt_to_response)
            loose = lib.test_instruction_following_loose(one, prompt_to_response)
        except Exception as exc:  # noqa: BLE001 - upstream's own crash, recorded for the comparison
            yield {"id": instruction_id, "crash": f"{type(exc).__name__}: {exc}"[:200]}
            continue
        yield {
            "id": instruction_id,
            "strict": strict.follow_instruction_list[0],
            "loose": loose.follow_instruction_list[0],
        }


def main(commit: str, code_dir: str, work_dir: str, questions: str, responses: str) -> None:
    home = Path(work_dir) / commit
    if not home.exists():
        shutil.copytree(code_dir, home)
    _stand_ins()
    sys.path.insert(0, str(home))
    import evaluation_lib as lib  # upstream's, from the copy

    inputs = lib.read_prompt_list(questions)
    prompt_to_response = lib.read_prompt_to_response_dict(responses)
    rows = [{"key": str(inp.key), "checks": list(_verdicts(lib, inp, prompt_to_response))} for inp in inputs]
    json.dump(rows, sys.stdout)


if __name__ == "__main__":
    main(*sys.argv[1:6])
