#!/usr/bin/env python3
"""racecheck's slowdown against plain simulate, per schedule, on the CPU simulator.

For each candidate (default: the fp16_gemm starter and the zoo's wgmma + TMA GEMM as an
fp16_gemm candidate) it runs kiln-sim-run plainly and with --racecheck (and --synccheck), takes
the launches' simulation seconds (the simulator's own time, without building or the CPU
reference), best of --repeat runs per workload, and prints per schedule kind the slowdown
racecheck/plain in total and per workload, plus the wall time of a default racecheck call.

  bench/racecheck_slowdown.py --sim-run build/bin/kiln-sim-run [--repeat 3]
      [--candidate fp16_gemm=tasks/fp16_gemm/starter.cu] ...

This is a benchmark, not a test: it asserts nothing, it prints what it measured (one JSON
object per line, then a table). It needs no GPU.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_CANDIDATES = [
    ("fp16_gemm", "starter", os.path.join(ROOT, "tasks/fp16_gemm/starter.cu")),
    ("fp16_gemm", "zoo:gemm_wgmma_tma", os.path.join(ROOT, "kb/zoo/gemm_wgmma_tma/kernel.cu")),
]


def run(sim_run, task, source, build_dir, extra):
    cmd = [sim_run, "--task", os.path.join(ROOT, "tasks", task), "--source", source,
           "--build-dir", build_dir] + extra
    start = time.monotonic()
    out = subprocess.run(cmd, capture_output=True, text=True, check=False)
    wall = time.monotonic() - start
    if not out.stdout.strip():
        sys.exit(f"kiln-sim-run printed nothing: {' '.join(cmd)}\n{out.stderr[-2000:]}")
    report = json.loads(out.stdout)  # one JSON object (no --progress)
    if not report.get("ok", False):
        sys.exit(f"kiln-sim-run failed: {report}")
    return report, wall


def plain_seconds(report):
    """Per workload: the simulation seconds of its launches."""
    out = {}
    for w in report["workloads"]:
        out[w["workload"]] = sum(l.get("stats", {}).get("simulation_seconds", 0.0)
                                 for l in w.get("launches", []))
    return out


def checked_seconds(report):
    """Per schedule label, per workload: the launches' seconds under the checker."""
    out = {}
    for s in report["schedules"]:
        label = s.get("label", s["schedule"])
        out[label] = {w["workload"]: w["launch_seconds"] for w in s["workloads"]}
    return out


def best(runs):
    merged = {}
    for r in runs:
        for k, v in r.items():
            merged[k] = min(merged.get(k, v), v)
    return merged


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sim-run", default=os.path.join(ROOT, "build/bin/kiln-sim-run"))
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--candidate", action="append", default=[],
                   help="TASK=PATH (default: the fp16_gemm starter and the zoo's wgmma GEMM)")
    args = p.parse_args()
    candidates = DEFAULT_CANDIDATES
    if args.candidate:
        candidates = [(c.split("=", 1)[0], c.split("=", 1)[1], c.split("=", 1)[1])
                      for c in args.candidate]
    rows = []
    with tempfile.TemporaryDirectory(prefix="kiln-racecheck-bench-") as tmp:
        for task, name, source in candidates:
            build = os.path.join(tmp, name.replace(":", "_").replace("/", "_"))
            run(args.sim_run, task, source, build, [])  # build once, outside the timing
            plain = best([plain_seconds(run(args.sim_run, task, source, build, [])[0])
                          for _ in range(args.repeat)])
            modes = {
                "racecheck default (in_order, reversed, random)": ["--racecheck"],
                "racecheck pct": ["--racecheck", "--schedules", "4", "--explore", "pct"],
                "synccheck default": ["--synccheck"],
            }
            for mode, flags in modes.items():
                reports = [run(args.sim_run, task, source, build, flags) for _ in range(args.repeat)]
                per_schedule = {}
                for report, _ in reports:
                    for label, seconds in checked_seconds(report).items():
                        per_schedule.setdefault(label, []).append(seconds)
                walls = sorted(w for _, w in reports)
                inside = sorted(r["seconds"] for r, _ in reports)
                for label, runs in per_schedule.items():
                    seconds = best(runs)
                    total_plain = sum(plain[w] for w in seconds)
                    total = sum(seconds.values())
                    row = {
                        "candidate": name, "mode": mode, "schedule": label,
                        "plain_s": round(total_plain, 4), "checked_s": round(total, 4),
                        "slowdown": round(total / total_plain, 2) if total_plain else None,
                        "per_workload": {w: round(seconds[w] / plain[w], 2)
                                         for w in seconds if plain.get(w)},
                        "call_wall_s": [round(walls[0], 2), round(walls[-1], 2)],
                        "call_inside_s": [round(inside[0], 2), round(inside[-1], 2)],
                    }
                    rows.append(row)
                    print(json.dumps(row), flush=True)
    print()
    print(f"{'candidate':22} {'mode':48} {'schedule':14} {'plain s':>8} {'checked s':>9} "
          f"{'slowdown':>8}  call wall s (min-max)")
    for r in rows:
        print(f"{r['candidate']:22} {r['mode']:48} {r['schedule']:14} {r['plain_s']:8.3f} "
              f"{r['checked_s']:9.3f} {r['slowdown'] or 0:8.2f}  "
              f"{r['call_wall_s'][0]:.2f}-{r['call_wall_s'][1]:.2f}")


if __name__ == "__main__":
    main()
