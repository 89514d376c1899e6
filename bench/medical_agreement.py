"""Measurement: where to put the floor of agreement of three medical answer samples.

    .venv/bin/python bench/medical_agreement.py [--lang en] [--seed 1]

The LLM mode asks for three compositions of a medical answer and compares them by the shipped
embedding (USE multilingual v3), mean pairwise cosine (graphs/medical/llm_writer.py,
`AGREEMENT_FLOOR`). Here the samples are stand-ins drawn from the shipped corpus: *agreeing*
triples are three different selections of sentences of one entry (what three faithful
compositions from one passage look like); *drifting* triples have one of the three from an entry
of another topic; *disagreeing* triples come from three entries of different topics. Prints the
spread of each kind and the share under the floor. Not a test: nothing is asserted.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from graphs.medical.evidence import cosine, sentences  # noqa: E402
from graphs.medical.llm_writer import AGREEMENT_FLOOR  # noqa: E402
from knowledge.embedding import USEEmbedding  # noqa: E402
from knowledge.medical_corpus import load_medical_corpus  # noqa: E402


def mean_pairwise(vectors: list[list[float]]) -> float:
    sims = [cosine(vectors[i], vectors[j]) for i in range(3) for j in range(i + 1, 3)]
    return sum(sims) / len(sims)


def selection(parts: list[str], rng: random.Random) -> str:
    """Two or three sentences of a passage, in its order: one faithful composition."""
    size = min(len(parts), rng.choice((2, 3)))
    return " ".join(parts[i] for i in sorted(rng.sample(range(len(parts)), size)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lang", default="en", choices=("en", "ko"))
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    entries = [
        (e.topic, sentences(e.text.get(args.lang)))
        for e in load_medical_corpus().entries
        if len(sentences(e.text.get(args.lang))) >= 3
    ]
    embed = USEEmbedding()
    kinds: dict[str, list[float]] = {"agreeing": [], "drifting": [], "disagreeing": []}
    for topic, parts in entries:
        others = [p for t, p in entries if t != topic]
        agreeing = [selection(parts, rng) for _ in range(3)]
        drifting = [*agreeing[:2], selection(rng.choice(others), rng)]
        picked = [parts, *rng.sample(others, 2)]
        disagreeing = [selection(p, rng) for p in picked]
        for kind, texts in (
            ("agreeing", agreeing),
            ("drifting", drifting),
            ("disagreeing", disagreeing),
        ):
            kinds[kind].append(mean_pairwise([list(v) for v in embed(texts)]))
    print(f"{len(entries)} entries ({args.lang}), mean pairwise cosine of three samples:")
    for kind, values in kinds.items():
        q = statistics.quantiles(values, n=20)
        print(
            f"  {kind:12s} min {min(values):.2f}  p5 {q[0]:.2f}  median "
            f"{statistics.median(values):.2f}  p95 {q[-1]:.2f}  max {max(values):.2f}  "
            f"under {AGREEMENT_FLOOR}: {sum(v < AGREEMENT_FLOOR for v in values) / len(values):.0%}"
        )


if __name__ == "__main__":
    main()
