"""``manage.py mcp_connectome export --declared|--observed|--diff [-o FILE]`` and
``manage.py mcp_connectome reach QUESTION ENTRY EFFECT [--gate GATE] [--graph GRAPH]``.

``export`` writes the canonical bytes (exactly what ``connectome://<graph>`` answers) to the
file or to standard output, and prints the digest: to standard output beside the file name,
or to standard error when the bytes themselves go to standard output. Standard output that
is a terminal gets the same JSON indented for a reader (one line of kilobytes reads badly),
unless ``--canonical`` asks for the bytes; a file or a pipe always gets the canonical bytes,
which is what anything that hashes them reads. ``--weights FILE`` writes the observed
counts' sidecar too (never hashed).

``reach`` asks one of the four reach questions (``connectome/core/questions.py``) of the
declared, observed or merged graph and prints the answer record as JSON, exactly what the
admin's reach form shows. Node ids may be typed without the server's name in front.
"""

from __future__ import annotations

import json
import sys
from argparse import ArgumentParser
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError
from django.db import DatabaseError

from beammcp_django.connectome.core.canonical import ALGORITHMS, Uncanonical
from beammcp_django.connectome.core.questions import GRAPH_NAMES, QUESTIONS, BadQuestion
from beammcp_django.connectome.exports import GRAPHS, export, reach_answer, weights_sidecar
from beammcp_django.management.startup_checks import StartupChecks


class Command(StartupChecks, BaseCommand):
    help = "Export the connectome's canonical bytes (declared, observed or diff) and their hash."

    def add_arguments(self, parser: ArgumentParser) -> None:
        actions = parser.add_subparsers(dest="action", required=True)
        exporting = actions.add_parser("export", help="write one graph's canonical bytes")
        which = exporting.add_mutually_exclusive_group(required=True)
        for name in GRAPHS:
            which.add_argument(
                f"--{name}",
                dest="graph",
                action="store_const",
                const=name,
                help=f"the {name} graph",
            )
        exporting.add_argument("-o", "--output", help="write to this file (default: stdout)")
        exporting.add_argument("--algorithm", choices=ALGORITHMS, default="sha256")
        exporting.add_argument(
            "--canonical",
            action="store_true",
            help="the canonical bytes even to a terminal (a file or a pipe always gets them)",
        )
        exporting.add_argument(
            "--weights", help="with --observed: also write the counts' sidecar to this file"
        )
        asking = actions.add_parser("reach", help="ask a reach question of a graph")
        asking.add_argument("question", choices=QUESTIONS)
        asking.add_argument("entry", help="the node to start from, e.g. tool/record_observation")
        asking.add_argument("effect", help="the node to reach, e.g. effect/model.write/app.Model")
        asking.add_argument("--gate", help="with avoiding and dominates: the node to cross")
        asking.add_argument("--graph", choices=GRAPH_NAMES, default="merged")

    def handle(self, *args: Any, **options: Any) -> None:
        if options["action"] == "reach":
            self._reach(options)
            return
        if options["weights"] and options["graph"] != "observed":
            raise CommandError("--weights goes with --observed: only observed edges have counts")
        try:
            exported = export(options["graph"], options["algorithm"])
            if options["weights"]:
                Path(options["weights"]).write_bytes(weights_sidecar())
        except Uncanonical as refusal:
            raise CommandError(
                f"the {options['graph']} graph cannot be written: {refusal}"
            ) from None
        except DatabaseError as error:
            raise CommandError(
                f"the observed store cannot be read ({error}); has `manage.py migrate` run?"
            ) from None
        line = f"{exported.algorithm} {exported.hexdigest}"
        output = options["output"]
        if output:
            Path(output).write_bytes(exported.data)
            self.stdout.write(f"{line}  {output}")
        elif sys.stdout.isatty() and not options["canonical"]:
            readable = json.dumps(json.loads(exported.data), indent=2, ensure_ascii=False)
            self.stdout.write(readable)
            self.stderr.write(f"{line}  (of the canonical bytes: --canonical, a file or a pipe)")
        else:
            sys.stdout.buffer.write(exported.data)
            sys.stdout.buffer.flush()
            self.stderr.write(line)

    def _reach(self, options: dict[str, Any]) -> None:
        try:
            answer = reach_answer(
                options["graph"],
                options["question"],
                options["entry"],
                options["effect"],
                options["gate"],
            )
        except BadQuestion as refusal:
            raise CommandError(str(refusal)) from None
        except DatabaseError as error:
            raise CommandError(
                f"the observed store cannot be read ({error}); has `manage.py migrate` run?"
            ) from None
        self.stdout.write(json.dumps(answer, indent=2, sort_keys=True, ensure_ascii=False))
