"""Benchmark: the admin's connectome drawing (``dot`` run in the request) at and past the
drawing cap, with the layout effort limits the package sets against ``dot`` without them.

What it measures
    ``beammcp_django.connectome.core.drawing.draw`` lays a graph out with graphviz's ``dot`` in
    the admin request, and ``dot`` has no time limit of its own: ``DRAWING_CAP`` (200 edges)
    and the effort limits (``mclimit``, ``nslimit``, ``nslimit1``; counts drawn as external
    labels) are what bound the page (docs/admin.md, "The drawing cap"). This script draws
    seeded random graphs of ``--edges`` edges among 30 to 200 nodes, observed edges with
    counts as the admin draws them, and times each drawing:

    - bounded: ``draw()`` as shipped;
    - the baseline: the same graph with the effort limits removed, in a child process cut
      off at ``--cutoff`` seconds (an unbounded dense layout can take minutes), on the first
      ``--baseline`` graphs of each size.

    It prints each size's median and longest bounded time, the baseline's, and the ratio of
    the baseline to the bounded time on the same graphs.

How to run (from the repository root; needs Debian's graphviz: apt-get install graphviz)
    .venv/bin/python bench/drawing.py [--edges 200,300] [--graphs 5] [--baseline 2] [--cutoff 30]

It always exits 0; the figures go into docs/admin.md with their date.
"""

from __future__ import annotations

import argparse
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent


def graph(seed: int, edges: int) -> list[tuple[str, str, int]]:
    """A seeded random graph: ``edges`` distinct edges among 30 to 200 tool and function
    nodes, each with a call count."""
    chooser = random.Random(seed)
    nodes = [f"srv/tool/t{i}" if i % 3 == 0 else f"srv/module/m{i % 7}/f{i}/1" for i in range(200)]
    nodes = nodes[: chooser.randint(30, 200)]
    pairs: set[tuple[str, str]] = set()
    while len(pairs) < edges:
        source, target = chooser.sample(nodes, 2)
        pairs.add((source, target))
    return [(source, target, chooser.randint(1, 10_000)) for source, target in sorted(pairs)]


def draw_one(seed: int, edges: int, bounded: bool) -> float:
    """Seconds ``draw()`` takes on one graph, with or without the effort limits."""
    from beammcp_django.connectome.core import drawing

    if not bounded:
        drawing._EFFORT = {}
    drawn = [drawing.DrawnEdge(s, t, "invoke", "observed", n) for s, t, n in graph(seed, edges)]
    start = time.perf_counter()
    svg = drawing.draw("bench", drawn)
    elapsed = time.perf_counter() - start
    if "<svg" not in svg:
        raise SystemExit("dot drew no SVG")
    return elapsed


def unbounded(seed: int, edges: int, cutoff: float) -> float | None:
    """The baseline in a child process; ``None`` when it passes the cutoff."""
    command = [sys.executable, __file__, "--one", str(seed), str(edges)]
    try:
        done = subprocess.run(
            command, cwd=REPO_ROOT, capture_output=True, text=True, timeout=cutoff, check=True
        )
    except subprocess.TimeoutExpired:
        return None
    return float(done.stdout.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--edges", default="200,300", help="graph sizes, comma-separated")
    parser.add_argument("--graphs", type=int, default=5, help="seeded graphs per size (5)")
    parser.add_argument("--baseline", type=int, default=2, help="graphs per size drawn unbounded")
    parser.add_argument("--cutoff", type=float, default=30.0, help="the baseline's cutoff (s)")
    parser.add_argument("--one", nargs=2, type=int, help=argparse.SUPPRESS)
    arguments = parser.parse_args()
    sys.path.insert(0, str(REPO_ROOT))
    if arguments.one:
        print(draw_one(arguments.one[0], arguments.one[1], bounded=False))
        return 0
    from bench.http import provenance

    print(provenance("drawing.py"))
    print(
        f"{arguments.graphs} seeded graphs per size among 30 to 200 nodes, observed edges with "
        f"counts; the first {arguments.baseline} also without the effort limits, cut off at "
        f"{arguments.cutoff:g} s"
    )
    for edges in (int(n) for n in arguments.edges.split(",")):
        seeds = range(edges, edges + arguments.graphs)
        bounded = [draw_one(seed, edges, bounded=True) for seed in seeds]
        baseline = [
            unbounded(seed, edges, arguments.cutoff) for seed in seeds[: arguments.baseline]
        ]
        ratios = [
            f"{b / a:.0f}x" if b is not None else f"> {arguments.cutoff / a:.0f}x"
            for a, b in zip(bounded, baseline, strict=False)
        ]
        shown = ", ".join(
            f"{b:.1f} s" if b is not None else f"> {arguments.cutoff:g} s" for b in baseline
        )
        print(
            f"{edges} edges: bounded median {statistics.median(bounded):.2f} s, longest "
            f"{max(bounded):.2f} s (each: {', '.join(f'{t:.2f}' for t in bounded)}); without the "
            f"limits: {shown or 'not run'}; baseline / bounded on the same graphs: "
            f"{', '.join(ratios) or '-'}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
