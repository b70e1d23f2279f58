"""Benchmark: the admin's connectome page rendered for a generated 5,000-edge graph, its first
view (``dot`` lays out the aggregated drawings) against a second view of the same graph
(every layout served from the cache).

What it measures
    A graph above the drawing cap is drawn aggregated (``beammcp_django.connectome.core.aggregate``)
    and each drawing's layout is cached by its DOT source (``drawing.layouts``), so a second
    view of an unchanged graph runs no ``dot`` (docs/admin.md, "Drawings at any size"). This
    script serves the page in process through Django's test client, as a logged-in superuser,
    on the sample project with a fresh SQLite database, its graphs replaced by the seeded
    generated graph the admin's tests use (``tests/admin/generated_graph.py``: ``--edges``
    declared edges, 1,000 of them observed with counts). Each round empties the layout cache,
    then times one view (dot runs) and a second view (cached). It prints the medians over
    ``--rounds`` rounds, the longest of each, the ratio, and the page's size; the target for
    the cached view is under 3 s.

How to run (from the repository root; needs Debian's graphviz: apt-get install graphviz)
    .venv/bin/python bench/connectome_page.py [--edges 5000] [--rounds 5]

It always exits 0; the figures go into docs/admin.md with their date.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path[0] = str(REPO_ROOT)  # the repository root, not bench/ (whose http.py is no stdlib)


def setup(directory: str) -> object:
    """The sample project on a fresh database; a test client logged in as a superuser."""
    os.environ["DJANGO_SETTINGS_MODULE"] = "sample_project.settings"
    os.environ["DATABASE_URL"] = f"sqlite:///{directory}/bench.sqlite3"
    import django
    from django.core.management import call_command

    django.setup()
    call_command("migrate", verbosity=0)
    from django.contrib.auth.models import User
    from django.test import Client

    client = Client(HTTP_HOST="localhost")
    client.force_login(User.objects.create_superuser("bench", "b@b.invalid", "unused"))
    return client


def replace_graphs(edges: int) -> None:
    """The page's declared and observed graphs: the generated ones."""
    from beammcp_django.connectome import exports
    from tests.admin.generated_graph import generated

    declared, observed = generated(exports.server_name(), edges=edges)
    exports.declared = lambda: declared  # type: ignore[assignment]
    exports.observed = lambda: observed  # type: ignore[assignment]


def view(client: object, url: str) -> tuple[float, int]:
    """Seconds one page view takes, and the page's bytes."""
    start = time.perf_counter()
    response = client.get(url)  # type: ignore[attr-defined]
    elapsed = time.perf_counter() - start
    if response.status_code != 200 or b"Aggregated to fit" not in response.content:
        raise SystemExit(f"the page did not draw the aggregate ({response.status_code})")
    return elapsed, len(response.content)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--edges", type=int, default=5000, help="declared edges (5000)")
    parser.add_argument("--rounds", type=int, default=5, help="rounds of two views (5)")
    arguments = parser.parse_args()
    from bench.http import provenance

    print(provenance("connectome_page.py"))
    with tempfile.TemporaryDirectory() as directory:
        client = setup(directory)
        replace_graphs(arguments.edges)
        from django.urls import reverse

        from beammcp_django.connectome.core import drawing

        url = reverse("admin:beammcp_django_connectome_changelist")
        first, second, size = [], [], 0
        for _ in range(arguments.rounds):
            drawing.layouts.clear()
            elapsed, size = view(client, url)
            first.append(elapsed)
            second.append(view(client, url)[0])
    print(
        f"{arguments.edges} declared edges, 1000 observed, {arguments.rounds} rounds, "
        f"page {size / 1e6:.1f} MB"
    )
    for name, times in (("first view (dot runs)", first), ("second view (cached)", second)):
        print(
            f"{name}: median {statistics.median(times):.2f} s, longest {max(times):.2f} s "
            f"(each: {', '.join(f'{t:.2f}' for t in times)})"
        )
    ratio = statistics.median(first) / statistics.median(second)
    print(f"first / second, medians: {ratio:.1f}x; target for the cached view: under 3 s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
