#!/usr/bin/env python3
"""Mutation testing of the loom models (issue 19).

One mutant at a time, in the protocol modules (src/protocol/**, exactly what the loom
build compiles), this script
  - weakens each Release, Acquire, AcqRel and SeqCst ordering to each next weaker
    ordering its operation accepts (a load's Acquire to Relaxed, a store's Release to
    Relaxed, a read-modify-write's AcqRel to Acquire and to Release, SeqCst to AcqRel,
    Acquire or Release as fits; a compare-and-swap's failure ordering like a load);
  - removes each fence (`fence(...)`, `fence_after_rmw()`), and weakens each SeqCst
    fence to AcqRel;
  - shifts each capacity comparison by one (`<` <-> `<=`, `>` <-> `>=`): comparisons in
    the ring, queue and allocator code (CAPACITY_FILES) that involve a capacity, length
    or bound (CAPACITY_TERMS), not a sign or emptiness test against 0.
For each mutant it edits a scratch copy of the repository (the real source is never
written, so Ctrl-C cannot leave it modified), builds the loom models that reach the
mutated file (from the `use` lines of loom-tests/tests/*.rs, closed over the protocol
modules' own `use crate::protocol::...` lines) and runs them, fastest first, until one
fails. A failed model (an assertion, a loom data race, deadlock or "too many
branches") or a timeout means the mutant is caught; if every model passes, it
survived. The score is caught / (caught + survived).

    nice -n 15 python3 tools/mutate.py            # every mutant (an hour or two on 2 CPUs)
    python3 tools/mutate.py --list [--check]      # the mutants and their models, no build
    python3 tools/mutate.py --only srb/mod.rs:2   # mutants whose "file:line" contains it

Each run builds with
    RUSTFLAGS="--cfg sccemu_loom" LOOM_MAX_PREEMPTIONS=2 \
        cargo test -p loom-tests --release --target-dir SCRATCH/target --test NAME...
in SCRATCH/tree (default SCRATCH: /tmp/sccemu-mutate), one target directory for every
mutant, so only the mutated crate and the models recompile.
"""

import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TESTS = Path("loom-tests/tests")
PROTOCOL = Path("src/protocol")
# Ring, queue and allocator code. ring/sizing.rs is left out: it is configuration
# arithmetic run once when a job is created, no protocol between cores, and no loom
# model runs it (its unit tests and the multi-process tests do).
CAPACITY_FILES = {
    "src/protocol/ring/srb/mod.rs",
    "src/protocol/ring/srb/space.rs",
    "src/protocol/ring/srb/mem.rs",
    "src/protocol/ring/perpeer.rs",
    "src/protocol/ring/frag.rs",
    "src/protocol/atomic/acc_queue.rs",
    "src/protocol/alloc/heap.rs",
    "src/protocol/alloc/freelist.rs",
}
CAPACITY_TERMS = re.compile(
    r"\bcap\b|capacity|max_payload|max_message|\bN\b|HEADER|slot_bytes|\blen\b|\.len\(\)|\.end\(\)"
)
RMW_CALLS = {"fetch_add", "fetch_sub", "fetch_or", "fetch_and", "fetch_xor", "fetch_nand",
             "fetch_max", "fetch_min", "swap"}
# The next weaker valid orderings, by operation (fences cannot be Relaxed: removal is
# their weakest form, generated separately).
WEAKER = {
    "load": {"Acquire": ["Relaxed"], "SeqCst": ["Acquire"]},
    "store": {"Release": ["Relaxed"], "SeqCst": ["Release"]},
    "rmw": {"AcqRel": ["Acquire", "Release"], "Acquire": ["Relaxed"], "Release": ["Relaxed"],
            "SeqCst": ["AcqRel"]},
    "cas-failure": {"Acquire": ["Relaxed"], "SeqCst": ["Acquire"]},
    "fence": {"SeqCst": ["AcqRel"], "AcqRel": ["Acquire", "Release"]},
}
LOOM_ENV = {"RUSTFLAGS": "--cfg sccemu_loom", "LOOM_MAX_PREEMPTIONS": "2",
            # Line tables only slow the link of every model; they change no code.
            "CARGO_PROFILE_RELEASE_DEBUG": "0", "CARGO_TERM_COLOR": "never"}


@dataclass
class Mutant:
    file: str  # relative to the repository
    line: int
    start: int  # byte span in the file's text
    end: int
    original: str
    replacement: str
    what: str  # e.g. "load Acquire -> Relaxed"

    @property
    def where(self):
        return f"{self.file}:{self.line}"


def blank_comments_and_strings(text):
    """`text` with comments and string literals replaced by spaces (offsets kept)."""
    out, i, n = list(text), 0, len(text)
    while i < n:
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i) + 2
        elif text[i] == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            j += 1
        elif text[i] == "'" and re.match(r"'(\\.|[^\\'])'", text[i:i + 4]):
            j = i + len(re.match(r"'(\\.|[^\\'])'", text[i:i + 4]).group(0))
        else:
            i += 1
            continue
        for k in range(i, j):
            if out[k] != "\n":
                out[k] = " "
        i = j
    return "".join(out)


def blank_test_modules(code):
    """`code` with `#[cfg(...test...)] mod tests { ... }` blocks blanked (not protocol
    code: the loom build never compiles them)."""
    for m in reversed(list(re.finditer(r"#\[cfg\([^\]]*\btest\b[^\]]*\)\]\s*mod\s+\w+\s*\{", code))):
        depth, j = 0, m.end() - 1
        while True:
            depth += {"{": 1, "}": -1}.get(code[j], 0)
            j += 1
            if depth == 0:
                break
        code = code[:m.start()] + re.sub(r"[^\n]", " ", code[m.start():j]) + code[j:]
    return code


def enclosing_call(code, pos):
    """(name, argument index, position of the name) of the call whose parentheses
    enclose `pos`, or None."""
    depth, commas, i = 0, 0, pos - 1
    while i >= 0:
        c = code[i]
        if c in ")]}":
            depth += 1
        elif c in "([{":
            if depth == 0:
                if c != "(":
                    return None
                m = re.search(r"(\w+)\s*$", code[:i])
                return (m.group(1), commas, m.start(1)) if m else None
            depth -= 1
        elif c == "," and depth == 0:
            commas += 1
        elif c == ";" and depth == 0:
            return None
        i -= 1
    return None


def line_of(text, pos):
    return text.count("\n", 0, pos) + 1


def ordering_role(code, pos):
    """What the ordering at `pos` orders: load, store, rmw, cas-success, cas-failure or
    fence; None if unknown."""
    call = enclosing_call(code, pos)
    if call is None:
        return None
    name, arg, at = call
    if name == "load":
        return "load"
    if name == "store":
        return "store"
    if name in RMW_CALLS:
        return "rmw"
    if name in ("compare_exchange", "compare_exchange_weak"):
        return {2: "rmw", 3: "cas-failure"}.get(arg)
    if name == "fence" and code[at - 1] != ".":
        return "fence"
    return None


def find_mutants(rel, text):
    """Every mutant of one protocol file."""
    code = blank_test_modules(blank_comments_and_strings(text))
    found, unknown = [], []

    def add(start, end, replacement, what):
        found.append(Mutant(rel, line_of(text, start), start, end, text[start:end], replacement, what))

    for m in re.finditer(r"\bOrdering::(Relaxed|Release|Acquire|AcqRel|SeqCst)\b", code):
        order = m.group(1)
        const = re.search(r"const\s+(\w+)\s*:\s*Ordering\s*=\s*$", code[:m.start()])
        if const:
            # An ordering constant: weakened as the calls that use it allow.
            uses = [u.start() for u in re.finditer(rf"\b{const.group(1)}\b", code) if u.start() > m.end()]
            roles = {ordering_role(code, u) for u in uses}
            role = roles.pop() if len(roles) == 1 else None
        else:
            role = ordering_role(code, m.start())
        if order == "Relaxed":
            continue
        if role is None:
            unknown.append(f"{rel}:{line_of(text, m.start())}: Ordering::{order} in an unknown operation")
            continue
        for weaker in WEAKER["rmw" if role == "rmw" else role].get(order, []):
            add(m.start(), m.end(), f"Ordering::{weaker}", f"{role} {order} -> {weaker}")
        if role == "fence":
            call = enclosing_call(code, m.start())
            close = code.index(")", m.end()) + 1
            add(call[2], close, "()", f"fence({order}) removed")
    for m in re.finditer(r"(?<![\w.])fence_after_rmw\(\)", code):
        if not re.search(r"fn\s+$", code[:m.start()]):
            add(m.start(), m.end(), "()", "fence_after_rmw() removed")
    if rel in CAPACITY_FILES:
        for m in re.finditer(r" (<=|>=|<|>) ", code):
            op = m.group(1)
            start = m.start() + 1
            stmt_start = code.rfind("\n", 0, start)
            line = code[stmt_start:code.find("\n", start)]
            if re.search(r"\bdebug_assert|const\s+_", line):
                continue  # compiled out in release builds, or checked at compile time
            left, right = operand(code, start, -1), operand(code, start + len(op), +1)
            if "0" in (left.strip(), right.strip()) or not CAPACITY_TERMS.search(left + " " + right):
                continue
            shifted = {"<": "<=", "<=": "<", ">": ">=", ">=": ">"}[op]
            add(start, start + len(op), shifted, f"`{left} {op} {right}` -> {shifted}")
    return found, unknown


def operand(code, pos, step):
    """The operand of the comparison operator at `pos`, scanning left (step -1) or
    right (+1) to the enclosing bracket or a top-level `&&`, `||`, `,`, `;`, `=`, `{`."""
    depth, i = 0, pos - 1 if step < 0 else pos
    opens, closes = ("([{", ")]}") if step > 0 else (")]}", "([{")
    while 0 <= i < len(code):
        c = code[i]
        if c in opens:
            if c in "{}" and depth == 0:
                break  # a block's start (scanning right) or the end of one before (left)
            depth += 1
        elif c in closes:
            if depth == 0:
                break
            depth -= 1
        elif depth == 0 and (c in ",;" or code[i:i + 2] in ("&&", "||") or code[i - 1:i + 1] in ("&&", "||")):
            break
        elif depth == 0 and c == "=" and code[i - 1] not in "=!<>" and code[i + 1] != "=":
            break
        i += step
    text = code[i + 1:pos] if step < 0 else code[pos:i]
    return re.sub(r"^\s*(else\s+)?(if|return|while)\s+", "", " ".join(text.split()))


def module_of(root, parts):
    """The protocol file a path below `protocol::` names (longest prefix; a folder
    module's `mod.rs`), or None."""
    for k in range(len(parts), 0, -1):
        base = root / PROTOCOL / Path(*parts[:k])
        for f in (base.with_suffix(".rs"), base / "mod.rs"):
            if f.is_file():
                return f.relative_to(root).as_posix()
    return None


def private_submodules(root, f, text):
    """Files of the private submodules (`mod name;`) a protocol file declares: parts of
    it that no path outside names, so whatever reaches the file reaches them."""
    code = blank_comments_and_strings(text)
    folder = f.parent if f.name == "mod.rs" else f.with_suffix("")
    found = set()
    for m in re.finditer(r"(?m)^\s*(?:#\[[^\]]*\]\s*)*mod\s+(\w+)\s*;", code):
        for g in (folder / f"{m.group(1)}.rs", folder / m.group(1) / "mod.rs"):
            if g.is_file():
                found.add(g.relative_to(root).as_posix())
    return found


def protocol_uses(root, text, prefix):
    """Protocol files a source text names through `prefix::protocol::...` paths."""
    code = blank_test_modules(blank_comments_and_strings(text))
    used = set()
    for m in re.finditer(rf"\b{prefix}::protocol((?:::\w+)+)", code):
        f = module_of(root, m.group(1).strip(":").split("::"))
        if f:
            used.add(f)
    return used


def model_map(root):
    """{protocol file: [loom test names that reach it]}."""
    deps = {}
    for f in sorted((root / PROTOCOL).rglob("*.rs")):
        rel = f.relative_to(root).as_posix()
        text = f.read_text()
        deps[rel] = protocol_uses(root, text, "crate") | private_submodules(root, f, text)
    reach = {}
    for t in sorted((root / TESTS).glob("*.rs")):
        seen, todo = set(), list(protocol_uses(root, t.read_text(), "sccemu"))
        while todo:
            f = todo.pop()
            if f not in seen:
                seen.add(f)
                todo.extend(deps.get(f, ()))
        for f in seen:
            reach.setdefault(f, []).append(t.stem)
    return reach


def all_mutants(root):
    mutants, unknown = [], []
    for f in sorted((root / PROTOCOL).rglob("*.rs")):
        found, unk = find_mutants(f.relative_to(root).as_posix(), f.read_text())
        mutants += sorted(found, key=lambda m: m.start)
        unknown += unk
    return mutants, unknown


class Runner:
    """Builds and runs loom models in the scratch tree."""

    def __init__(self, scratch, timeout_min, timeout_factor):
        self.tree, self.target = scratch / "tree", scratch / "target"
        self.timeout_min, self.timeout_factor = timeout_min, timeout_factor
        self.baseline = {}  # model -> seconds
        self.env = dict(os.environ, **LOOM_ENV)

    def prepare(self):
        if self.tree.exists():
            shutil.rmtree(self.tree)
        shutil.copytree(ROOT, self.tree, ignore=shutil.ignore_patterns("target", ".git"))
        (self.tree / "src/lib.rs").touch()  # rebuild from this content, whatever was built before

    def run(self, cmd, timeout=None):
        """(returncode or None on timeout, output); the child's process group dies with us."""
        p = subprocess.Popen(cmd, cwd=self.tree, env=self.env, stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, text=True, start_new_session=True)
        try:
            out, _ = p.communicate(timeout=timeout)
            return p.returncode, out
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            return None, p.communicate()[0]
        except BaseException:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
            raise

    def build(self, models):
        cmd = ["cargo", "test", "-p", "loom-tests", "--release", "--no-run", "--message-format=json",
               "--target-dir", str(self.target)]
        for m in models:
            cmd += ["--test", m]
        rc, out = self.run(cmd)
        exes = {}
        for line in out.splitlines():
            if line.startswith("{"):
                msg = json.loads(line)
                if msg.get("reason") == "compiler-artifact" and msg.get("executable"):
                    exes[msg["target"]["name"]] = msg["executable"]
        errors = [json.loads(l).get("message", {}).get("rendered", "") for l in out.splitlines()
                  if l.startswith("{") and '"level":"error"' in l]
        return (exes if rc == 0 else None), "".join(errors) or out[-2000:]

    def run_model(self, exe, model):
        limit = max(self.timeout_min, self.timeout_factor * self.baseline.get(model, self.timeout_min))
        t0 = time.monotonic()
        rc, out = self.run([exe, "--test-threads=1"], timeout=limit)
        return rc, out, time.monotonic() - t0


def failure_reason(rc, out):
    if rc is None:
        return "timeout"
    # A test's own line, or (when loom's panic aborts the binary first) its thread's name.
    failed = re.findall(r"^test (\S+) \.\.\. FAILED", out, re.M) or re.findall(r"thread '(\w+)' .*panicked", out)
    for needle, why in (("deadlock", "deadlock"), ("maximum number of branches", "too many branches"),
                        ("Causality violation", "data race"), ("panicked at", "assertion")):
        if needle in out:
            return f"{why} in {failed[0] if failed else '?'}"
    return f"exit {rc}"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--list", action="store_true", help="list the mutants and their models; build nothing")
    ap.add_argument("--check", action="store_true",
                    help="with --list: fail if an ordering's operation is unknown or a mutant has no model")
    ap.add_argument("--only", action="append", default=[], help="mutants whose file:line contains this")
    ap.add_argument("--scratch", type=Path, default=Path("/tmp/sccemu-mutate"))
    ap.add_argument("--timeout-min", type=float, default=120, help="seconds a model run may always take")
    ap.add_argument("--timeout-factor", type=float, default=10, help="times its unmutated run time")
    ap.add_argument("--report", type=Path, help="also write the results as a markdown table here")
    args = ap.parse_args()

    mutants, unknown = all_mutants(ROOT)
    if args.only:
        mutants = [m for m in mutants if any(o in m.where for o in args.only)]
    reach = model_map(ROOT)
    unreached = sorted({m.file for m in mutants if not reach.get(m.file)})
    if args.list:
        for m in mutants:
            print(f"{m.where:40} {m.what:58} models: {' '.join(sorted(reach.get(m.file, []))) or 'NONE'}")
        print(f"{len(mutants)} mutants in {len({m.file for m in mutants})} files")
        for u in unknown:
            print("unknown:", u)
        for f in unreached:
            print("no model reaches", f)
        return 1 if args.check and (unknown or unreached) else 0

    runner = Runner(args.scratch, args.timeout_min, args.timeout_factor)
    results = []
    started = time.monotonic()
    try:
        runner.prepare()
        every = sorted({t for m in mutants for t in reach.get(m.file, [])})
        print(f"baseline: building and running {len(every)} models in {runner.tree}", flush=True)
        exes, err = runner.build(every)
        if exes is None:
            sys.exit(f"the unmutated tree does not build:\n{err}")
        for model in every:
            rc, out, secs = runner.run_model(exes[model], model)
            if rc != 0:
                sys.exit(f"model {model} fails without any mutation:\n{out[-3000:]}")
            runner.baseline[model] = secs
            print(f"  {model}: {secs:.1f} s", flush=True)
        for n, m in enumerate(mutants, 1):
            results.append(run_mutant(runner, m, reach.get(m.file, [])))
            r = results[-1]
            print(f"[{n}/{len(mutants)}] {m.where:36} {m.what:56} {r['outcome']:9} {r['detail']} "
                  f"({r['seconds']:.0f} s)", flush=True)
    except KeyboardInterrupt:
        print("\ninterrupted: the real source was never modified; partial results follow")
    summarize(results, time.monotonic() - started, args.report)
    return 0


def run_mutant(runner, m, models):
    path = runner.tree / m.file
    original = path.read_text()
    t0 = time.monotonic()
    outcome, detail = "survived", "no model reaches it" if not models else ""
    try:
        assert original[m.start:m.end] == m.original
        path.write_text(original[:m.start] + m.replacement + original[m.end:])
        exes, err = runner.build(models) if models else ({}, "")
        if exes is None:
            outcome, detail = "error", "build failed: " + err.strip().splitlines()[0] if err.strip() else "build failed"
        else:
            for model in sorted(models, key=lambda t: runner.baseline.get(t, 0)):
                rc, out, _ = runner.run_model(exes[model], model)
                if rc != 0:
                    outcome, detail = "caught", f"by {model}: {failure_reason(rc, out)}"
                    break
            else:
                detail = detail or "ran " + " ".join(sorted(models))
    finally:
        path.write_text(original)  # a fresh mtime too, so cargo never keeps a mutant's build
    return {"where": m.where, "what": m.what, "original": m.original, "replacement": m.replacement,
            "outcome": outcome, "detail": detail, "seconds": time.monotonic() - t0}


def summarize(results, seconds, report):
    caught = sum(r["outcome"] == "caught" for r in results)
    survived = [r for r in results if r["outcome"] == "survived"]
    errors = [r for r in results if r["outcome"] == "error"]
    judged = caught + len(survived)
    score = 100.0 * caught / judged if judged else 0.0
    print(f"\nscore: {caught}/{judged} caught ({score:.1f}%), {len(errors)} build errors, "
          f"{seconds / 60:.0f} min")
    for r in survived:
        print(f"  survived: {r['where']}  {r['what']}")
    for r in errors:
        print(f"  error: {r['where']}  {r['what']}: {r['detail']}")
    if report:
        lines = ["| where | mutation | outcome | detail |", "|---|---|---|---|"]
        lines += [f"| {r['where']} | {r['what']} | {r['outcome']} | {r['detail']} |" for r in results]
        lines.append(f"\nscore: {caught}/{judged} caught ({score:.1f}%), {seconds / 60:.0f} min")
        report.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    sys.exit(main())
