"""Mutation run over the rules, the search's selection and backup, the
statistics and the match scoring (docs/results/mutation.md).

Usage (the command the report was made with is `bash tools/mutation.sh`):

  python tools/mutation/run.py [--only NAME ...] [--python PY] [--out DIR]

Run under an interpreter that has cosmic-ray (`pip install -e .[mutation]`
or `pip install cosmic-ray==8.7.0` in a separate venv); the tests run under
`--python` (default: the repository's .venv, else this interpreter), which
needs the project and its dev extras.

For each target of tools/mutation/targets.toml it copies the working tree
(tracked and untracked, not ignored files) to `build/mutation/NAME/tree`,
so the checkout is never mutated, makes a cosmic-ray session there, skips
the mutants of left-out operators and of functions not listed, runs the
unmutated tests (the baseline must pass) and then every mutant, one after
another, each in a fresh pytest process (JAX recompiles what a mutant
changes; unchanged programs load from a compilation cache shared by the
target's runs). It writes `DIR/NAME.json`: one entry per mutant (job id,
operator, line, occurrence, the diff, the outcome: killed, survived,
timeout or skipped) and the counts, and prints a markdown table.
"""

from __future__ import annotations

import argparse
import ast
import datetime
import json
import os
import random
import re
import shlex
import shutil
import subprocess
import sys
import time
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def function_spans(source: str, names):
  """{qualified name: (first line, last line)} of the listed functions."""
  spans = {}

  def visit(node, prefix):
    for child in ast.iter_child_nodes(node):
      if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef,
                            ast.ClassDef)):
        qual = prefix + child.name
        first = min([child.lineno] + [d.lineno for d in
                                      getattr(child, "decorator_list", [])])
        if qual in names:
          spans[qual] = (first, child.end_lineno)
        visit(child, qual + ".")

  visit(ast.parse(source), "")
  missing = set(names) - set(spans)
  if missing:
    raise SystemExit(f"mutation: no function {sorted(missing)} in the module")
  return spans


def copy_tree(dest: Path):
  """The working tree's tracked and untracked-but-not-ignored files."""
  if dest.exists():
    shutil.rmtree(dest)
  files = subprocess.run(
      ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
      cwd=ROOT, check=True, capture_output=True).stdout.split(b"\0")
  for f in files:
    if not f:
      continue
    src = ROOT / os.fsdecode(f)
    if not src.is_file() or src.is_symlink():
      continue
    out = dest / os.fsdecode(f)
    out.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(src, out)


def run_target(target, exclude, python, out_dir: Path, cosmic_ray: str,
               count_only: bool = False):
  from cosmic_ray.work_db import use_db, WorkDB  # noqa: F401
  from cosmic_ray.work_item import WorkResult, WorkerOutcome

  name = target["name"]
  work = ROOT / "build" / "mutation" / name
  tree = work / "tree"
  copy_tree(tree)
  (work / "started.json").write_text(json.dumps({
      "commit": git("rev-parse", "HEAD"),
      "dirty": bool(git("status", "--porcelain", "--untracked-files=no")),
      "date": datetime.date.today().isoformat()}))
  cache = work / "xla-cache"
  cache.mkdir(parents=True, exist_ok=True)
  session = work / "session.sqlite"
  if session.exists():
    session.unlink()
  timeout = float(target.get("timeout", 120))
  test_args = ["-m", "pytest", "-x", "-q", "-n", "0", "-p", "no:randomly",
               "--durations=0", "-o", f"timeout={int(timeout)}"] + list(
                   target["tests"])
  command = " ".join(shlex.quote(a) for a in [python] + test_args)
  config = work / "cosmic-ray.toml"
  config.write_text(
      "[cosmic-ray]\n"
      f"module-path = {json.dumps(target['module'])}\n"
      f"timeout = {timeout}\n"
      "excluded-modules = []\n"
      f"test-command = {json.dumps(command)}\n"
      "[cosmic-ray.distributor]\nname = \"local\"\n")
  env = dict(os.environ, PYTHONPATH=str(tree),
             JAX_COMPILATION_CACHE_DIR=str(cache),
             JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS="0",
             JAX_PLATFORMS="cpu")
  subprocess.run([cosmic_ray, "init", str(config), str(session)], cwd=tree,
                 env=env, check=True)

  source = (tree / target["module"]).read_text()
  spans = function_spans(source, target.get("functions", []))
  pattern = re.compile("|".join(f"(?:{e})" for e in exclude))
  with use_db(str(session)) as db:
    skip = []
    for item in db.pending_work_items:
      for m in item.mutations:
        line = m.start_pos[0]
        outside = spans and not any(a <= line <= b for a, b in spans.values())
        if pattern.match(m.operator_name) or outside:
          skip.append(item.job_id)
    if skip:
      db.set_multiple_results(skip, WorkResult(
          output="filtered", worker_outcome=WorkerOutcome.SKIPPED))
    population = sorted(i.job_id for i in db.pending_work_items)
    sample = target.get("sample")
    if sample and len(population) > sample:
      # A fixed random sample (seeded by the target's name), where the
      # whole set costs too much: every mutant recompiles the tests' JAX.
      keep = set(random.Random(name).sample(population, sample))
      db.set_multiple_results([j for j in population if j not in keep],
                              WorkResult(output="not sampled",
                                         worker_outcome=WorkerOutcome.SKIPPED))
    pending = sum(1 for _ in db.pending_work_items)
  print(f"[{name}] {pending} mutants to run of {len(population)} "
        f"({len(skip)} filtered out)", flush=True)
  if count_only:
    return None

  start = time.time()
  base = subprocess.run([python] + test_args, cwd=tree, env=env,
                        capture_output=True, text=True)
  baseline_s = time.time() - start
  if base.returncode != 0:
    print(base.stdout[-4000:], base.stderr[-4000:])
    raise SystemExit(f"[{name}] the unmutated tests fail: fix them first")
  print(f"[{name}] baseline passed in {baseline_s:.1f} s", flush=True)
  start = time.time()
  subprocess.run([cosmic_ray, "exec", str(config), str(session)], cwd=tree,
                 env=env, check=True)
  exec_s = time.time() - start

  return collect(target, python, out_dir, baseline_s, exec_s)


def collect(target, python, out_dir: Path, baseline_s=None, exec_s=None):
  """The summary of a target's session (also of one stopped part way:
  its unfinished mutants are counted as `not run`)."""
  from cosmic_ray.work_db import use_db
  from cosmic_ray.work_item import WorkerOutcome

  name = target["name"]
  work = ROOT / "build" / "mutation" / name
  session = work / "session.sqlite"
  source = (work / "tree" / target["module"]).read_text()
  functions = function_spans(source, all_functions(source))
  population = 0
  with use_db(str(session)) as db:
    not_run = sum(1 for _ in db.pending_work_items)
    for _, result in db.completed_work_items:
      if (result.worker_outcome != WorkerOutcome.SKIPPED
          or result.output == "not sampled"):
        population += 1
  population += not_run
  mutants = []
  with use_db(str(session)) as db:
    for item, result in db.completed_work_items:
      m = item.mutations[0]
      if result.worker_outcome == WorkerOutcome.SKIPPED:
        continue  # filtered: not a mutant of this run
      if result.worker_outcome != WorkerOutcome.NORMAL:
        status = "error"
      elif result.test_outcome.value == "survived":
        status = "survived"
      elif (result.output or "").strip() == "timeout":
        status = "timeout"
      elif result.test_outcome.value == "incompetent":
        status = "incompetent"
      else:
        status = "killed"
      mutants.append({
          "id": item.job_id[:12], "operator": m.operator_name,
          "occurrence": m.occurrence, "line": m.start_pos[0],
          "function": next((f for f, (a, b) in sorted(
              functions.items(),
              key=lambda kv: kv[1][1] - kv[1][0])
                            if a <= m.start_pos[0] <= b), None),
          "status": status, "diff": result.diff})
  mutants.sort(key=lambda r: (r["line"], r["operator"], r["occurrence"]))
  counts = {s: sum(r["status"] == s for r in mutants)
            for s in ("killed", "survived", "timeout", "incompetent",
                      "error")}
  summary = {
      "target": name, "module": target["module"],
      "functions": target.get("functions", []),
      "tests": target["tests"], "timeout_s": target.get("timeout", 120),
      "population": population, "sample": target.get("sample"),
      "not_run": not_run,
      "generated": len(mutants), **counts,
      "baseline_s": baseline_s and round(baseline_s, 1),
      "run_s": exec_s and round(exec_s, 1),
      **json.loads((work / "started.json").read_text()),
      "cosmic_ray": cosmic_ray_version(),
      "mutants": mutants,
  }
  out_dir.mkdir(parents=True, exist_ok=True)
  (out_dir / f"{name}.json").write_text(json.dumps(summary, indent=1) + "\n")
  return summary


def all_functions(source):
  names = []

  def visit(node, prefix):
    for child in ast.iter_child_nodes(node):
      if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef,
                            ast.ClassDef)):
        names.append(prefix + child.name)
        visit(child, prefix + child.name + ".")

  visit(ast.parse(source), "")
  return names


def git(*args):
  return subprocess.run(["git", *args], cwd=ROOT, capture_output=True,
                        text=True).stdout.strip()


def cosmic_ray_version():
  from importlib.metadata import version
  return version("cosmic-ray")


def table(summaries):
  lines = ["| target | module | run (of) | killed | timed out | "
           "survived | other | not run |", "|---|---|---|---|---|---|---|---|"]
  for s in summaries:
    other = s["incompetent"] + s["error"]
    lines.append(f"| {s['target']} | `{s['module']}` | {s['generated']} "
                 f"({s['population']}) | "
                 f"{s['killed']} | {s['timeout']} | {s['survived']} | "
                 f"{other} | {s.get('not_run', 0)} |")
  return "\n".join(lines)


def main(argv=None):
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--only", nargs="*", help="target names to run")
  parser.add_argument("--python", help="interpreter that runs the tests")
  parser.add_argument("--out", default=str(ROOT / "docs" / "results" /
                                           "mutation"))
  parser.add_argument("--targets", default=str(Path(__file__).with_name(
      "targets.toml")))
  parser.add_argument("--count", action="store_true",
                      help="only count each target's mutants")
  parser.add_argument("--collect", action="store_true",
                      help="only summarize the targets' sessions as they are")
  parser.add_argument("--table", action="store_true",
                      help="only print the table of the saved results")
  args = parser.parse_args(argv)
  spec = tomllib.loads(Path(args.targets).read_text())
  targets = [t for t in spec["target"]
             if not args.only or t["name"] in args.only]
  out = Path(args.out)
  if args.table:
    print(table([json.loads((out / f"{t['name']}.json").read_text())
                 for t in targets if (out / f"{t['name']}.json").exists()]))
    return
  if args.collect:
    print(table([collect(t, None, out) for t in targets]))
    return
  python = args.python or (str(ROOT / ".venv" / "bin" / "python")
                           if (ROOT / ".venv" / "bin" / "python").exists()
                           else sys.executable)
  cosmic_ray = str(Path(sys.executable).with_name("cosmic-ray"))
  summaries = [run_target(t, spec["operators"]["exclude"], python, out,
                          cosmic_ray, args.count) for t in targets]
  if not args.count:
    print(table(summaries))


if __name__ == "__main__":
  main()
