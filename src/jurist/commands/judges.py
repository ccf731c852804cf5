"""``jurist judges``: compare the judges of a run, show its judge card, qualify a replacement judge.

The measures live in :mod:`jurist.audit` (agreement, the card) and :mod:`jurist.ratings`; this module
parses the options and prints.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any, Literal

import typer

from jurist.commands.parsing import use_jurist_command

judges_app = typer.Typer(no_args_is_help=True, help="Compare the judges of a run, or show its judge card.")


def _cell(value: Any, digits: int = 3) -> str:
    if value is None:
        return "-"
    return f"{value:.{digits}f}" if isinstance(value, float) else str(value)


def print_comparison(result: dict[str, Any]) -> None:
    from rich.table import Table

    from jurist.report import table_console

    console = table_console()
    agreement = Table(title="judge agreement (per game, candidate's perspective)")
    for name in ("judge A", "judge B", "n", "agree", "agree 3-way", "kappa 5", "kappa 3", "models"):
        agreement.add_column(name, justify="left" if name.startswith("judge") else "right")
    agreement.add_column("spearman", justify="right")
    agreement.add_column("kendall", justify="right")
    for row in result["pairs"]:
        agreement.add_row(
            row["judge_a"],
            row["judge_b"],
            str(row["n"]),
            _cell(row["agreement"]),
            _cell(row["agreement_three"]),
            _cell(row["kappa_five"]),
            _cell(row["kappa_three"]),
            str(row["n_models"]),
            _cell(row["spearman"]),
            _cell(row["kendall"]),
        )
    console.print(agreement)
    if not result["ensemble"]:
        console.print("[dim]no leaderboard.json: no rank correlation or ensemble score[/dim]")
        return
    board = Table(title="scores by judge, and their mean (ensemble)")
    board.add_column("model")
    for judge in result["judges"]:
        board.add_column(judge, justify="right")
    board.add_column("ensemble", justify="right")
    for row in result["ensemble"]:
        scores = row["scores"]
        cells = [_cell(scores.get(judge), 1) for judge in result["judges"]]
        board.add_row(row["model"], *cells, _cell(row["ensemble"], 1))
    console.print(board)


@judges_app.command("compare")
def compare(
    run_dir: Annotated[Path, typer.Argument(help="a run directory judged by several judges")],
    format: Annotated[Literal["table", "json"], typer.Option("--format", help="table or json")] = "table",
) -> None:
    """Per-game agreement, Cohen's kappa (5 labels and 3-way), leaderboard rank correlation, ensemble."""
    from jurist.audit import compare_judges

    result = compare_judges(run_dir)
    if format == "json":
        typer.echo(json.dumps(result, indent=2))
    else:
        print_comparison(result)


@judges_app.command("card")
def card(
    run_dir: Annotated[Path, typer.Argument(help="a judged run directory")],
    format: Annotated[Literal["table", "json"], typer.Option("--format", help="table or json")] = "table",
    gold: Annotated[
        Path | None,
        typer.Option(
            "--gold",
            help="a JSONL of human labels (uid, model, label or winner): the card's gold agreement against "
            "them, from the stored judgments (no request), written to judge_card.json",
        ),
    ] = None,
) -> None:
    """The run's judge card (judge_card.json): each judge's probes, intervals, thresholds and flags."""
    document = None
    if gold is not None:
        from jurist.audit import gold_card

        document = gold_card(run_dir, gold)
    if format == "json":
        from jurist.audit import read_card

        typer.echo(json.dumps(read_card(run_dir), indent=2, ensure_ascii=False))
        return
    print_run_card(run_dir, "table")
    if document is not None:
        for line in gold_lines(document):
            typer.echo(line)


def gold_lines(document: dict[str, Any]) -> list[str]:
    """Each judge's gold agreement with its Cohen's kappa and what it was read against (the card's table
    has a column for the accuracy only)."""
    lines = []
    for judge, audit in (document.get("judges") or {}).items():
        found = audit["probes"].get("gold_agreement")
        if found is None or found.get("estimate") is None:
            continue
        kappa = "-" if found.get("kappa") is None else f"{found['kappa']:.2f}"
        interval = f"[{found['ci_low']:.2f}, {found['ci_high']:.2f}]"
        lines.append(
            f"{judge}: gold agreement {found['estimate']:.2f} {interval}, Cohen's kappa {kappa}, "
            f"n {found['n']}, against {found.get('against')}"
        )
    return lines


def print_run_card(run_dir: Path, fmt: str, *, missing_ok: bool = False) -> None:
    """The run's judge card as ``jurist run`` printed it: the table on stdout (table format only), notes
    and warnings on stderr; ``missing_ok``: a run without a card prints nothing."""
    from rich.console import Console

    from jurist.audit import CARD_FILE, read_card
    from jurist.report import print_card, table_console

    if missing_ok and not (run_dir / CARD_FILE).is_file():
        return
    document = read_card(run_dir)
    print_card(document, out=table_console() if fmt == "table" else None, err=Console(stderr=True))


def register(app: typer.Typer) -> None:
    use_jurist_command(judges_app)
    app.add_typer(judges_app, name="judges")


@judges_app.command("replace")
def replace(
    bench: Annotated[str, typer.Option("--bench", help="alpaca-eval | arena-hard-v0.1")],
    judge: Annotated[str, typer.Option("--judge", help="the candidate judge (alias or model string)")],
    out: Annotated[
        Path | None, typer.Option("--out", help="study folder (default replacements/BENCH)")
    ] = None,
    panel: Annotated[
        Path | None, typer.Option("--panel", help="a folder of model outputs and the old judge's judgments")
    ] = None,
    models: Annotated[
        str | None, typer.Option("--models", help="panel models to keep (comma-separated), or a number N")
    ] = None,
    items: Annotated[
        int | None, typer.Option("--items", min=1, help="questions sampled (stratified)")
    ] = None,
    seed: Annotated[int, typer.Option(help="seed of the sample and the bootstraps")] = 0,
    models_file: Annotated[Path | None, typer.Option("--models-file", "-m", help="models YAML")] = None,
    base_url: Annotated[str | None, typer.Option("--base-url", help="endpoint of a model string")] = None,
    judge_prompt: Annotated[Path | None, typer.Option(help="replace the protocol's prompt")] = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="requests, tokens and dollars; send nothing")
    ] = False,
    batch: Annotated[
        str, typer.Option(help="none | judges: the judge's requests through batch APIs")
    ] = "none",
    prices: Annotated[Path | None, typer.Option(help="prices file (alias or model -> price)")] = None,
    max_cost: Annotated[float | None, typer.Option(help="stop sending past this many USD")] = None,
    bootstrap: Annotated[int, typer.Option(min=50, help="bootstrap rounds of every interval")] = 1000,
    no_check: Annotated[bool, typer.Option("--no-check", help="skip the pre-run probe")] = False,
    no_progress: Annotated[bool, typer.Option("--no-progress")] = False,
    fmt: Annotated[Literal["table", "json"], typer.Option("--format", help="table or json")] = "table",
) -> None:
    """Qualify a replacement for a retired reference judge on its own stored verdicts; fit the re-anchoring
    map (DIR/replacement.json, for jurist run/show --anchor)."""
    from rich.console import Console

    from jurist.config import ModelStringOptions
    from jurist.replace import StudyRequest, print_replacement, replace_judge
    from jurist.report import table_console
    from jurist.run import batch_choice

    request = StudyRequest(
        bench=bench,
        judge=judge,
        out=out or Path("replacements") / bench,
        models=tuple(m.strip() for m in (models or "").split(",") if m.strip()),
        items=items,
        seed=seed,
        models_file=models_file,
        model_strings=ModelStringOptions(base_url=base_url),
        judge_prompt=judge_prompt,
        batching=batch_choice(batch, 30.0, None, 30.0, 3, None),
        prices_file=prices,
        max_cost=max_cost,
        check=not no_check,
        progress=not no_progress,
        n_bootstrap=bootstrap,
    )
    code, document = replace_judge(request, panel, dry_run=dry_run, console=Console(stderr=True))
    if document is not None:
        if fmt == "json":
            typer.echo(json.dumps(document, indent=2, ensure_ascii=False))
        else:
            print_replacement(document, table_console())
    if code:
        raise typer.Exit(code)
