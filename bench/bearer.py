"""Benchmark: what the bearer-token path costs a request, against ``allow_all``.

What it measures (issue 16)
    1. The hook alone, in one process (``bench/bearer_hook.py``): the CPU per call
       (``time.process_time``) of ``allow_all`` and of the bearer authorizer
       (``beammcp_django.oauth.bearer.authorize``) given a django-oauth-toolkit access token
       already in its cache, 200,000 calls a round, interleaved rounds, medians. The
       difference is the CPU the bearer path adds to a request with a warm token cache; the
       issue's target is at most 10 µs.
    2. The whole request, through two servers started alike (``bench/http.py``'s uvicorn
       command line, ``bench/bearer_settings.py``: the bench settings with
       django-oauth-toolkit installed, on one fresh migrated SQLite file): one keeps
       ``allow_all``, the other (``BENCH_AUTH=bearer``) is a resource server validating the
       toolkit's tokens. wrk -t2 -c32 sends the stateless 2026-07-28 ``tools/call`` echo
       (``CALL_SYNC``) to each, the bearer one with ``Authorization: Bearer <token>``;
       interleaved rounds; medians of req/s, the server's CPU per request and p99. Ratios
       bearer / allow_all from medians in the same run, and the CPU difference in µs.

    The token is one row the bench writes into the toolkit's tables (a user, a public
    application, an access token for the resource, valid for a day); each server validates
    it once (a query), then serves it from its cache. Each load's answer is checked by hand
    before and after the rounds; wrk's non-2xx answers and socket errors must be 0.

How to run (from the repository root; needs ``apt-get install wrk`` and
``requirements/bench.txt``)
    .venv/bin/python bench/bearer.py --quick     # 2 rounds of 3 s: ~30 s
    .venv/bin/python bench/bearer.py             # 5 rounds of 5 s: ~1.5 min

It exits 0 when every load was served without errors (a missed target is a finding, not a
failure), and 1 otherwise.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path

sys.path[0] = str(Path(__file__).resolve().parent.parent)  # the repository root, not bench/

from bench.http import (  # noqa: E402
    BOUNDED_HTTP,
    CALL_SYNC,
    REPO_ROOT,
    SERVERS,
    UVICORN_FLAGS,
    Comparison,
    Exchange,
    Load,
    Sample,
    Server,
    json_from_module,
    median_of,
    prepare_environment,
    provenance,
    round_order,
    run_wrk,
    sampled,
    wrk_script,
)

CONNECTIONS = 32
HOOK_CALLS = 200_000
TARGET_ADDED_US = 10.0


@dataclass(frozen=True)
class BearerExchange(Exchange):
    """The stateless echo, carrying the bench's bearer token."""

    token: str = ""

    def headers(self) -> dict[str, str]:
        return {**super().headers(), "Authorization": f"Bearer {self.token}"}


COMPARISONS = (
    Comparison("tools/call echo c=32, req/s", "bearer", "allow_all", "rps"),
    Comparison(
        "tools/call echo c=32, CPU per request", "bearer", "allow_all", "cpu_us_per_request"
    ),
    Comparison("tools/call echo c=32, p99 latency", "bearer", "allow_all", "p99_us"),
)


def environment(directory: Path) -> dict[str, str]:
    """The servers' environment: bearer settings on a fresh SQLite file, migrated with the
    toolkit's tables."""
    env = {**prepare_environment(directory), "DJANGO_SETTINGS_MODULE": "bench.bearer_settings"}
    subprocess.run(
        [sys.executable, "manage.py", "migrate", "--noinput", "-v", "0"],
        cwd=REPO_ROOT,
        env=env,
        check=True,
        timeout=180,
    )
    return env


def hook_lines(env: dict[str, str], rounds: int) -> tuple[list[str], float]:
    token = json_from_module("bench.bearer_hook", ["mint"], env, 60)["token"]
    measured = json_from_module(
        "bench.bearer_hook",
        ["measure", token, str(HOOK_CALLS), str(max(rounds, 3))],
        {**env, "BENCH_AUTH": "bearer"},
        600,
    )
    added = measured["bearer"] - measured["allow_all"]
    verdict = "meets" if added <= TARGET_ADDED_US else "MISSES"
    lines = [
        f"{'the AUTHORIZE hook alone, in one process':<48} {'µs CPU/call':>12} {'per round':>17}",
        *(
            f"{name:<48} {measured[name]:12.2f} {f'{min(runs):.2f}-{max(runs):.2f}':>17}"
            for name, runs in measured["rounds"].items()
        ),
        f"{'added by the bearer path (warm token cache)':<48} {added:12.2f} "
        f"{f'target <= {TARGET_ADDED_US:g} µs':>17}  {verdict}",
    ]
    return lines, token


def throughput(
    env: dict[str, str], token: str, rounds: int, seconds: float, directory: Path
) -> tuple[dict[str, list[Sample]], list[str]]:
    exchanges = {
        "allow_all": CALL_SYNC,
        "bearer": BearerExchange("tools/call", "echo", token=token),
    }
    specs = {
        "allow_all": replace(SERVERS["ours"], key="allow_all", label="ours, allow_all"),
        "bearer": replace(
            SERVERS["ours"],
            key="bearer",
            label="ours, bearer tokens",
            environment=(("BENCH_AUTH", "bearer"),),
        ),
    }
    servers = {name: Server(spec, env, directory) for name, spec in specs.items()}
    problems: list[str] = []
    samples: dict[str, list[Sample]] = {name: [] for name in servers}
    try:
        loads = {name: Load(name, "ours", exchanges[name], CONNECTIONS) for name in servers}
        scripts = {name: wrk_script(load, directory) for name, load in loads.items()}
        for name, server in servers.items():
            server.wait_ready()
            server.check(loads[name].exchange)
            run_wrk(loads[name], server, 1, scripts[name])  # warm-up, not kept
        for round_index in range(rounds):
            for name in round_order(list(servers), round_index):
                where = f"round {round_index + 1}/{rounds}  {name:<10}"
                sample = sampled(loads[name], servers[name], seconds, scripts[name], where)
                samples[name].append(sample)
                if sample.errors or sample.non_2xx:
                    problems.append(
                        f"{name} round {round_index + 1}: {sample.non_2xx} non-2xx, "
                        f"{sample.errors} socket errors"
                    )
        for name, server in servers.items():
            try:
                server.check(loads[name].exchange)
            except RuntimeError as error:
                problems.append(f"{name} after the rounds: {error}")
    finally:
        for server in servers.values():
            server.stop()
    return samples, problems


def throughput_lines(samples: dict[str, list[Sample]]) -> list[str]:
    lines = [
        f"{'ours (uvicorn, 1 worker), tools/call echo c=32':<48} {'req/s':>9} {'range':>15} "
        f"{'CPU µs/req':>10} {'p99 ms':>7} {'errors':>6}"
    ]
    for name, runs in samples.items():
        rates = [run.rps for run in runs]
        lines.append(
            f"{name:<48} {statistics.median(rates):9,.0f} "
            f"{f'{min(rates):,.0f}-{max(rates):,.0f}':>15} "
            f"{median_of(runs, 'cpu_us_per_request'):10.1f} "
            f"{median_of(runs, 'p99_us') / 1000:7.2f} "
            f"{sum(run.errors + run.non_2xx for run in runs):6d}"
        )
    added = median_of(samples["bearer"], "cpu_us_per_request") - median_of(
        samples["allow_all"], "cpu_us_per_request"
    )
    lines += ["", f"{'bearer / allow_all':<48} {'ratio':>9} {'per round':>15}"]
    for comparison in COMPARISONS:
        top, bottom = samples[comparison.numerator], samples[comparison.denominator]
        ratio = median_of(top, comparison.metric) / median_of(bottom, comparison.metric)
        per_round = [
            getattr(a, comparison.metric) / getattr(b, comparison.metric)
            for a, b in zip(top, bottom, strict=True)
        ]
        lines.append(
            f"{comparison.title:<48} {ratio:8.2f}x "
            f"{f'{min(per_round):.2f}-{max(per_round):.2f}x':>15}"
        )
    lines.append(f"{'CPU per request added by the bearer path':<48} {added:8.1f} µs")
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="2 rounds of 3 s")
    parser.add_argument("--rounds", type=int, help="interleaved rounds (default 5; quick 2)")
    parser.add_argument("--seconds", type=float, help="length of one load (default 5; quick 3)")
    arguments = parser.parse_args()
    rounds = arguments.rounds or (2 if arguments.quick else 5)
    seconds = arguments.seconds or (3.0 if arguments.quick else 5.0)
    if shutil.which("wrk") is None:
        print("wrk is not installed: apt-get install -y wrk", file=sys.stderr)
        return 1
    header = (
        f"{provenance('bearer.py')}\nuvicorn --workers 1 --http {BOUNDED_HTTP} "
        f"{' '.join(UVICORN_FLAGS)}; wrk -t2 -c{CONNECTIONS} -d{seconds:g}s, {rounds} "
        "interleaved rounds, medians; django-oauth-toolkit tokens, warm cache"
    )
    print(header, flush=True)
    with tempfile.TemporaryDirectory(prefix="bench-bearer-") as temporary:
        directory = Path(temporary)
        env = environment(directory)
        hook, token = hook_lines(env, rounds)
        print("\n".join(hook), flush=True)
        samples, problems = throughput(env, token, rounds, seconds, directory)
    print()
    print("\n".join([header, "", *hook, "", *throughput_lines(samples), ""]))
    print("problems: " + ("; ".join(problems) if problems else "none"))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
