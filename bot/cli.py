"""Command line: `intake-bot run | chat | export | migrate | kb | research | ask`."""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import signal
import sys
from pathlib import Path

from bot.config import Settings

# Libraries whose INFO/DEBUG records carry what people wrote or secrets: PTB logs request
# parameters and updates (message text) and the Bot API URL (the token), openai the request
# body, httpx/httpcore URLs, aiosqlite and SQLAlchemy SQL parameters. They stay at WARNING
# whatever INTAKE_LOG_LEVEL says.
# Where scripts/local_llm.sh serves the packaged model (`chat --llm` without an address).
LOCAL_LLM_URL = "http://127.0.0.1:8080/v1"
PAYLOAD_LOGGERS = ("telegram", "openai", "httpx", "httpcore", "aiosqlite", "sqlalchemy", "chromadb")


def setup_logging(level: str) -> None:
    """Operator logs: time, level, logger, message (ids and states only, never message text)."""
    existing = set(logging.getLogger().handlers)
    logging.basicConfig(
        level=level.upper(),
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )
    for name in PAYLOAD_LOGGERS:
        logging.getLogger(name).setLevel(logging.WARNING)
    # Our handler also drops lower records of libraries that set their own logger's level
    # (bm25s sets DEBUG on import, which would otherwise print on every index build).
    for handler in set(logging.getLogger().handlers) - existing:
        handler.setLevel(level.upper())


def with_llm(settings: Settings, url: str = "") -> Settings:
    """The settings in LLM mode (`chat --llm [BASE_URL]`): the endpoint `url`, else
    INTAKE_LLM_BASE_URL, else the local model's server (scripts/local_llm.sh); the model
    INTAKE_LLM_MODEL, else "local" (llama.cpp's server answers whatever model is named)."""
    return settings.model_copy(
        update={
            "intake_llm": "on",
            "intake_llm_base_url": url or settings.intake_llm_base_url or LOCAL_LLM_URL,
            "intake_llm_model": settings.intake_llm_model or "local",
        }
    )


async def _chat(settings: Settings, args: argparse.Namespace) -> None:
    from bot.console import run_console
    from bot.engine import Engine

    engine = await Engine.open(settings)
    try:
        await run_console(engine, chat_id=args.chat_id, jsonl=args.jsonl, domain=args.domain)
    finally:
        await engine.close()


async def _run(settings: Settings, webhook: bool) -> None:
    from bot.telegram_app import run_bot

    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    await run_bot(settings, stop, webhook=webhook)


async def _migrate(settings: Settings) -> int:
    """`intake-bot migrate`: bring the records database to the newest schema."""
    from db.engine import create_records_engine, dispose_records_engine
    from db.migrate import current, head

    engine = await create_records_engine(  # opening applies what is pending
        settings.intake_data_dir, settings.intake_database_url
    )
    try:
        async with engine.connect() as conn:
            now = await conn.run_sync(current)
    finally:
        await dispose_records_engine(engine)
    print(f"records database at migration {now} (newest {head()})")
    return 0


async def _export(settings: Settings, args: argparse.Namespace) -> None:
    from bot import export
    from bot.engine import Engine

    # Opening the engine repairs any intake that finished while its records did not follow.
    engine = await Engine.open(settings, serving=False)
    try:
        rows = await export.collect(
            engine=engine.records,
            include_open=args.all,
            deadlines_of=lambda record: engine.deadlines_of(record, "ko"),
            intake_state=engine.intake_state,
        )
    finally:
        await engine.close()
    text = export.render(rows, args.format)
    if args.out:
        Path(args.out).write_text(text, encoding="utf-8")
        print(f"wrote {len(rows)} intakes to {args.out}", file=sys.stderr)
    else:
        sys.stdout.write(text if text.endswith("\n") else text + "\n")


async def _research(settings: Settings, args: argparse.Namespace) -> int:
    """`intake-bot research DRUG` / `ask "QUESTION"` [--json]: the report, or one line (exit 2)
    saying why there is none; a source that cannot be reached is that line, not a traceback."""
    from bot.brains import close_brain, make_brain
    from bot.research import Researcher
    from db import repo
    from db.engine import create_records_engine, dispose_records_engine
    from knowledge.loader import default_knowledge

    knowledge = default_knowledge()
    brain = make_brain(settings, knowledge)
    # the records database keeps the responses a while: the same question again sends nothing
    records = await create_records_engine(settings.intake_data_dir, settings.intake_database_url)
    researcher = Researcher(
        settings, knowledge, llm=getattr(brain, "client", None), cache=repo.RecordsCache(records)
    )
    query = " ".join(args.query)
    try:
        # in the words' language: Korean when they are, else English
        outcome = await researcher.run(args.cmd, query, "en")
    finally:
        await researcher.aclose()
        await close_brain(brain)
        await dispose_records_engine(records)
    if outcome.report is None:
        print(outcome.line, file=sys.stderr)
        return 2
    print(outcome.report.to_json() if args.json else outcome.report.text(knowledge))
    return 0


def _kb(settings: Settings, args: argparse.Namespace) -> int:
    """`intake-bot kb build | search | ingest`."""
    from knowledge import kb as kbmod
    from knowledge.loader import default_knowledge

    knowledge = default_knowledge()
    if args.kb_cmd == "build":
        index, report = kbmod.build_index(
            settings.intake_data_dir,
            knowledge,
            progress=True,
            refresh_all=True,
            env=settings.embedding_env,
        )
        for name in index.collections():
            stats = report.get(name)
            done = (
                f" ({stats.added} added, {stats.updated} updated, {stats.removed} removed, "
                f"{stats.unchanged} unchanged)"
                if stats
                else ""
            )
            print(f"{name}: {index.count(name)} documents{done}")
        index.close()
        return 0
    if args.kb_cmd == "ingest":
        return _kb_ingest(settings, args, knowledge)
    return _kb_search(settings, args, knowledge)


def _kb_ingest(settings: Settings, args: argparse.Namespace, knowledge) -> int:
    """`intake-bot kb ingest PATH --collection NAME`: exit 2 when nothing could be loaded."""
    from knowledge import kb as kbmod
    from knowledge.ingest import IngestError

    try:
        report = kbmod.read_corpus(Path(args.path), collection=args.collection, progress=True)
    except IngestError as exc:
        print(f"Cannot ingest: {exc}", file=sys.stderr)
        return 2
    for problem in report.problems[:10]:
        print(f"  skipped: {problem}", file=sys.stderr)
    if not report.documents:
        print(
            f"Nothing to ingest from {args.path}: {report.records} records read, "
            f"{report.skipped} skipped.",
            file=sys.stderr,
        )
        return 2
    index = kbmod.open_index(
        settings.intake_data_dir, knowledge, progress=True, env=settings.embedding_env
    )
    try:
        stats = kbmod.add_corpus(
            index,
            settings.intake_data_dir,
            report,
            Path(args.path),
            collection=args.collection,
            progress=True,
        )
    finally:
        index.close()
    print(
        f"{args.collection}: {report.records} records read, {report.skipped} skipped, "
        f"{len(report.documents)} chunks ({stats.added} added, {stats.updated} updated, "
        f"{stats.unchanged} unchanged)"
    )
    return 0


def _kb_search(settings: Settings, args: argparse.Namespace, knowledge) -> int:
    """`intake-bot kb search QUERY`: hits with fused and per-method scores."""
    from knowledge import kb as kbmod

    query = " ".join(args.query).strip()
    if not any(ch.isalnum() for ch in query):
        print("Nothing to search for: the query is empty or only punctuation.", file=sys.stderr)
        return 2
    if args.k is not None and args.k < 1:
        print("--k must be 1 or more.", file=sys.stderr)
        return 2
    index = kbmod.open_index(
        settings.intake_data_dir, knowledge, progress=True, env=settings.embedding_env
    )
    collections = [args.collection] if args.collection else None
    try:
        hits = index.search(query, k=args.k, collections=collections)
    except kbmod.KnowledgeIndexError as exc:
        print(str(exc), file=sys.stderr)
        return 2
    finally:
        index.close()
    if args.json:
        print(json.dumps([_hit_json(h) for h in hits], ensure_ascii=False, indent=2))
        return 0
    if not hits:
        print("No matches.")
    for n, h in enumerate(hits, start=1):
        methods = "  ".join(
            f"{m} #{h.ranks.get(m) or '-'} ({h.scores[m]:.3f})"
            if h.scores.get(m) is not None
            else f"{m} -"
            for m in ("vector", "bm25")
        )
        snippet = " ".join(h.text.split())[:110]
        print(f"{n:>2}. {h.id} [{h.collection}] fused {h.score:.4f}  {methods}\n    {snippet}")
    return 0


def _hit_json(h) -> dict:
    """One search hit as `kb search --json` prints it."""
    return {
        "id": h.id,
        "collection": h.collection,
        "score": round(h.score, 6),
        "ranks": h.ranks,
        "scores": {m: (round(v, 6) if v is not None else None) for m, v in h.scores.items()},
        "parent_id": h.parent_id,
        "metadata": h.metadata,
    }


def main(argv: list[str] | None = None) -> int:
    """Entry point of the `intake-bot` console script."""
    parser = argparse.ArgumentParser(
        prog="intake-bot", description="Legal intake bot (Telegram and console)."
    )
    sub = parser.add_subparsers(dest="cmd", required=True)
    run = sub.add_parser("run", help="run the Telegram bot (long polling, or --webhook)")
    run.add_argument(
        "--webhook",
        action="store_true",
        help="serve INTAKE_WEBHOOK_URL (INTAKE_WEBHOOK_LISTEN/PORT/SECRET) instead of polling",
    )
    sub.add_parser("migrate", help="apply pending database migrations and say where it is")
    chat = sub.add_parser("chat", help="offline console chat with the same engine and database")
    chat.add_argument("--jsonl", action="store_true", help="one JSON line out for each line in")
    chat.add_argument("--chat-id", type=int, default=1, help="conversation to use (default 1)")
    chat.add_argument(
        "--domain",
        choices=["legal", "medical"],
        help="start in the legal intake or the medical assistant (default: ask, or follow the "
        "first message)",
    )
    chat.add_argument(
        "--llm",
        nargs="?",
        const="",
        metavar="BASE_URL",
        help="LLM mode against an OpenAI-compatible server (default: INTAKE_LLM_BASE_URL, else "
        f"the local model of scripts/local_llm.sh at {LOCAL_LLM_URL})",
    )
    exp = sub.add_parser("export", help="export intake summaries")
    exp.add_argument("--format", choices=["json", "csv", "md"], default="json")
    exp.add_argument(
        "--all", action="store_true", help="include open intakes with their missing fields"
    )
    exp.add_argument("--out", help="file to write (standard output without it)")
    kb = sub.add_parser("kb", help="the knowledge index (Chroma + BM25)")
    kb_sub = kb.add_subparsers(dest="kb_cmd", required=True)
    kb_sub.add_parser(
        "build",
        help="index K0-K4, the lexicon and the medical corpus (only what changed is re-embedded)",
    )
    search = kb_sub.add_parser("search", help="hybrid search with fused and per-method scores")
    search.add_argument("query", nargs="+")
    search.add_argument(
        "--k", type=int, default=None, help="hits (default: by query complexity 3/8/15)"
    )
    search.add_argument("--collection", default=None)
    search.add_argument("--json", action="store_true")
    ingest = kb_sub.add_parser(
        "ingest", help="load a corpus (JSONL, YAML, Markdown or MedQuAD XML folder)"
    )
    ingest.add_argument("path")
    ingest.add_argument("--collection", required=True)
    research = sub.add_parser(
        "research", help="a PubMed and ClinicalTrials.gov report on a drug (staff's assistant)"
    )
    research.add_argument("query", nargs="*", metavar="DRUG")
    research.add_argument("--json", action="store_true", help="the report as JSON")
    ask = sub.add_parser("ask", help="a research question naming a drug or condition")
    ask.add_argument("query", nargs="*", metavar="QUESTION")
    ask.add_argument("--json", action="store_true", help="the report as JSON")
    args = parser.parse_args(argv)

    settings = Settings()
    setup_logging(settings.intake_log_level if args.cmd == "run" else "WARNING")
    if args.cmd == "kb":
        return _kb(settings, args)
    if args.cmd in ("research", "ask"):
        return asyncio.run(_research(settings, args))
    if args.cmd == "migrate":
        return asyncio.run(_migrate(settings))
    if args.cmd == "chat":
        if args.llm is not None:
            settings = with_llm(settings, args.llm)
        asyncio.run(_chat(settings, args))
    elif args.cmd == "run":
        from bot.telegram_app import PollingStopped

        try:
            asyncio.run(_run(settings, args.webhook))
        except PollingStopped:  # logged; a non-zero exit lets a supervisor restart the bot
            return 1
    else:
        asyncio.run(_export(settings, args))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
