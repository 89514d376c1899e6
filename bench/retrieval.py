"""Benchmark: BM25 only vs vector only vs hybrid (RRF) retrieval, measured in one run.

    .venv/bin/python bench/retrieval.py [--limit 1000] [--out bench/out]

Corpus: ../shared/data/medquad/answers.jsonl, ingested with `knowledge.ingest` (long answers are
chunked; a hit counts for the document it came from). Query sets:
- MedQuAD dev questions (English; the answer is the document with the same `id`), `--limit`
  of them, spread evenly over the file (0 = all);
- bench/data/ko_medical_questions.jsonl: Korean questions whose answers are MedQuAD documents
  (cross-lingual), as written and bridged (`graphs.medical.bridge`: the English names of the
  conditions, symptoms and medicines they name, from the product's medical lexicon, appended);
- bench/data/ko_legal_questions.jsonl: Korean legal questions over K3 (the answer is the
  sub-type's K3 entry in either language).
Prints Recall@1/5/10, MRR@10, focus-level hit rate@10 (a document with the gold focus in the top
10), p50/p95 query latency, index build time and on-disk size. Not a test: nothing is asserted.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from graphs.medical.bridge import bridge_query  # noqa: E402
from graphs.medical.slots import SlotExtractor  # noqa: E402
from knowledge.documents import knowledge_documents  # noqa: E402
from knowledge.embedding import default_embedding  # noqa: E402
from knowledge.index import KnowledgeIndex  # noqa: E402
from knowledge.ingest import load_corpus  # noqa: E402
from knowledge.loader import default_knowledge  # noqa: E402

SHARED = ROOT.parent / "shared" / "data" / "medquad"
METHODS = {"bm25": ("bm25",), "vector": ("vector",), "hybrid": ("vector", "bm25")}
DEPTH = 10


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [
        json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()
    ]


def dir_size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def ranked_parents(
    index: KnowledgeIndex, query: str, methods: tuple[str, ...], collection: str
) -> tuple[list[str], list[dict], float]:
    """Document ids (chunks folded into their parent, best rank kept) and the query time."""
    start = time.perf_counter()
    hits = index.search(query, k=DEPTH * 3, collections=[collection], methods=methods)
    elapsed = time.perf_counter() - start
    seen: list[str] = []
    metas: list[dict] = []
    for hit in hits:
        if hit.parent_id not in seen:
            seen.append(hit.parent_id)
            metas.append(hit.metadata)
    return seen[:DEPTH], metas[:DEPTH], elapsed


def evaluate(
    index: KnowledgeIndex, queries: list[dict[str, Any]], collection: str, gold_of, focus_of=None
) -> dict[str, dict[str, float]]:
    results = {}
    for name, methods in METHODS.items():
        r1 = r5 = r10 = mrr = focus_hits = 0.0
        latencies = []
        for q in queries:
            ids, metas, elapsed = ranked_parents(index, q["question"], methods, collection)
            latencies.append(elapsed)
            gold = gold_of(q)
            rank = next((i + 1 for i, doc in enumerate(ids) if doc in gold), None)
            if rank:
                r1 += rank <= 1
                r5 += rank <= 5
                r10 += rank <= 10
                mrr += 1 / rank
            if focus_of is not None and any(m.get("focus") == focus_of(q) for m in metas):
                focus_hits += 1
        n = len(queries)
        results[name] = {
            "R@1": r1 / n,
            "R@5": r5 / n,
            "R@10": r10 / n,
            "MRR@10": mrr / n,
            "focus@10": focus_hits / n if focus_of else float("nan"),
            "p50 ms": 1000 * statistics.median(latencies),
            "p95 ms": 1000 * sorted(latencies)[min(n - 1, int(0.95 * n))],
        }
    return results


def print_table(title: str, n: int, results: dict[str, dict[str, float]]) -> None:
    print(f"\n{title} ({n} queries)")
    cols = ["R@1", "R@5", "R@10", "MRR@10", "focus@10", "p50 ms", "p95 ms"]
    print(f"{'method':<8}" + "".join(f"{c:>10}" for c in cols))
    for name, row in results.items():
        cells = "".join(f"{row[c]:>10.1f}" if "ms" in c else f"{row[c]:>10.3f}" for c in cols)
        print(f"{name:<8}{cells}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--limit", type=int, default=1000, help="MedQuAD dev questions to run (0 = all)"
    )
    parser.add_argument("--index-dir", type=Path, default=None, help="reuse/keep the index here")
    args = parser.parse_args()

    tmp = tempfile.TemporaryDirectory()
    path = args.index_dir or Path(tmp.name) / "index"
    index = KnowledgeIndex(path, default_embedding())

    start = time.perf_counter()
    report = load_corpus(SHARED / "answers.jsonl", collection="medquad", progress=True)
    load_time = time.perf_counter() - start
    start = time.perf_counter()
    stats = index.upsert("medquad", report.documents, progress=True)
    build_time = time.perf_counter() - start
    kn = default_knowledge()
    for name, docs in knowledge_documents(kn).items():
        index.sync(name, docs)
    print(
        f"MedQuAD: {report.records} records, {len(report.documents)} chunks, {report.skipped} skipped; "
        f"load {load_time:.1f} s, index build {build_time:.1f} s ({stats.added} embedded); "
        f"on disk {dir_size(path) / 2**20:.1f} MiB (chroma {dir_size(path / 'chroma') / 2**20:.1f}, "
        f"bm25 {dir_size(path / 'bm25') / 2**20:.1f})"
    )

    dev = read_jsonl(SHARED / "dev_questions.jsonl")
    if args.limit:
        step = max(1, len(dev) // args.limit)
        dev = dev[::step][: args.limit]
    results = evaluate(index, dev, "medquad", lambda q: {q["id"]}, lambda q: q["focus"])
    print_table("MedQuAD dev questions, English", len(dev), results)

    ko_med = read_jsonl(ROOT / "bench" / "data" / "ko_medical_questions.jsonl")
    results = evaluate(index, ko_med, "medquad", lambda q: {q["id"]}, lambda q: q["focus"])
    print_table("Korean medical questions over MedQuAD (cross-lingual)", len(ko_med), results)
    extractor = SlotExtractor()
    bridged = [{**q, "question": bridge_query(q["question"], extractor)} for q in ko_med]
    results = evaluate(index, bridged, "medquad", lambda q: {q["id"]}, lambda q: q["focus"])
    print_table("The same, bridged by the medical lexicon (당뇨 → diabetes)", len(ko_med), results)

    ko_legal = read_jsonl(ROOT / "bench" / "data" / "ko_legal_questions.jsonl")
    results = evaluate(
        index,
        ko_legal,
        "k3_legal_info",
        lambda q: {f"k3:{q['sub_type']}:ko", f"k3:{q['sub_type']}:en"},
    )
    print_table("Korean legal questions over K3", len(ko_legal), results)
    tmp.cleanup()


if __name__ == "__main__":
    main()
