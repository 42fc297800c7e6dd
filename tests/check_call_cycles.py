#!/usr/bin/env python3
"""No call cycle among the C files of a folder: file X uses (calls, or
reads) a symbol that file Y defines makes an edge X -> Y, read exactly from
the objects the build made (nm: what each defines, what it leaves
undefined), and a cycle of such edges is one. A static inline function of
Y.h is Y.c's too: X.c calling it is an edge X -> Y as well (found in the
sources, comments and strings left out). Files that call each other
cannot be understood, tested or replaced one at a time; what two of them
share belongs in a file below both.

The folders' files form one graph, so a cycle through two of them is
found as well. Each FOLDER is a source folder relative to the build's
source root (viewer/analyze, profiler); its objects are those CMake made
from its own .c files, whichever target compiled them.

A folder may also be a pipeline of stages, its subfolders in order
(FOLDER=STAGE,STAGE,...): a file of a stage uses (by a symbol, a header's
inline function, or an #include of a header) only its own stage's files
and earlier stages'; the folder's own files (the pipeline that runs the
stages) come after every stage, and no stage uses them; the folder's own
headers are its interface (the types and codes of its input, settings
and errors), which every stage may include.

  check_call_cycles.py BUILD FOLDER[=STAGE,...]...
                                         exit 0 when there is no cycle and
                                         no stage uses a later one, 1
                                         printing each, 2 on bad use
  NM=... names the nm to run (default nm)"""
import os
import re
import subprocess
import sys

NM = os.environ.get("NM", "nm")
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # the build's sources (main)
INLINE = re.compile(r"^static\s+inline\b[^;{(]*?\b(\w+)\s*\(", re.M)
COMMENT_OR_STRING = re.compile(r'/\*.*?\*/|//[^\n]*|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'', re.S)


def code_of(path, strings=False):
    """The file's text without comments and, unless strings, string
    literals (an #include's "name" is one)."""
    with open(path, errors="replace") as f:
        text = f.read()
    if not strings:
        return COMMENT_OR_STRING.sub(" ", text)
    # a comment's text goes, a string's stays: both in one pass, so that a
    # "/*" inside a string starts no comment
    return COMMENT_OR_STRING.sub(lambda m: m.group(0) if m.group(0)[0] in "\"'" else " ", text)


def source_root(build):
    """The sources the build was made from (CMakeCache.txt), else this
    script's checkout."""
    try:
        with open(os.path.join(build, "CMakeCache.txt")) as f:
            for line in f:
                if line.startswith("CMAKE_HOME_DIRECTORY:"):
                    return line.split("=", 1)[1].strip()
    except OSError:
        pass
    return ROOT


def all_objects(build):
    """{source path: [object paths]} of every C file the build compiled:
    CMake puts the object of D/REL.c, compiled by a target of folder D, at
    BUILD/D/CMakeFiles/<target>.dir/REL.c.o (a ".." of REL as "__")."""
    found = {}
    for top, dirs, names in os.walk(build):
        dirs.sort()
        parts = os.path.relpath(top, build).split(os.sep)
        if "CMakeFiles" not in parts:
            continue
        at = parts.index("CMakeFiles")
        if len(parts) <= at + 1 or not parts[at + 1].endswith(".dir"):
            continue
        for name in sorted(names):
            if not name.endswith(".c.o"):
                continue
            rel = [".." if p == "__" else p for p in parts[:at] + parts[at + 2:]]
            src = os.path.normpath(os.path.join(*(rel + [name[:-2]])))
            if not os.path.isfile(os.path.join(ROOT, src)):
                continue  # left over from a file since removed
            found.setdefault(src, []).append(os.path.join(top, name))
    return found


def objects(found, folder):
    """{source path: [object paths]} of the folder's .c files, its
    subfolders' included."""
    folder = os.path.normpath(folder)
    return {src: objs for src, objs in found.items() if src.startswith(folder + os.sep)}


def symbols(objs):
    """{object: (defined, used)}: the global symbols each object defines,
    and those it takes from elsewhere (one nm for all of them)."""
    out = subprocess.run([NM, "-P", "-g", "-A"] + objs, capture_output=True, text=True,
                         check=True).stdout
    syms = {o: (set(), set()) for o in objs}
    for line in out.splitlines():
        obj, _, rest = line.partition(": ")
        parts = rest.split()
        if obj not in syms or len(parts) < 2:
            continue
        defined, used = syms[obj]
        (used if parts[1] in ("U", "w", "v") else defined).add(parts[0])
    return syms


def inline_uses(files):
    """{file: {file: [inline functions]}}: the static inline functions of
    Y.h (beside Y.c) each file X.c calls."""
    owner = {}
    for f in files:
        h = os.path.join(ROOT, f[:-2] + ".h")
        if os.path.isfile(h):
            for name in INLINE.findall(code_of(h)):
                owner.setdefault(name, f)
    uses = {f: {} for f in files}
    if not owner:
        return uses
    call = re.compile(r"\b(%s)\s*\(" % "|".join(sorted(owner)))
    for f in files:
        src = os.path.join(ROOT, f)
        if not os.path.isfile(src):
            continue
        for name in set(call.findall(code_of(src))):
            if owner[name] != f:
                uses[f].setdefault(owner[name], []).append(name + " (inline)")
    return uses


def graph(files):
    """{file: {file it uses: [the symbols, sorted]}} from {file: (defined, used)}."""
    owner = {}
    for f, (defined, _) in files.items():
        for s in defined:
            owner.setdefault(s, f)
    edges = {f: {} for f in files}
    for f, (_, used) in files.items():
        for s in used:
            g = owner.get(s)
            if g is not None and g != f:
                edges[f].setdefault(g, []).append(s)
    for f, by in inline_uses(files).items():
        for g, names in by.items():
            edges[f].setdefault(g, []).extend(names)
    for f in edges:
        for g in edges[f]:
            edges[f][g].sort()
    return edges


def strong_components(edges):
    """Tarjan's strongly connected components with more than one file."""
    index, low, on, stack, out = {}, {}, set(), [], []
    counter = [0]

    def visit(v):
        # iterative: a deep graph must not hit Python's recursion limit
        work = [(v, iter(sorted(edges[v])))]
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        while work:
            node, it = work[-1]
            nxt = next(it, None)
            if nxt is not None:
                if nxt not in index:
                    index[nxt] = low[nxt] = counter[0]
                    counter[0] += 1
                    stack.append(nxt)
                    on.add(nxt)
                    work.append((nxt, iter(sorted(edges[nxt]))))
                elif nxt in on:
                    low[node] = min(low[node], index[nxt])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == node:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return out


def one_cycle(edges, comp):
    """A shortest cycle through the component's first file."""
    start, inside = comp[0], set(comp)
    prev, queue = {start: None}, [start]
    while queue:
        nxt = []
        for v in queue:
            for w in sorted(edges[v]):
                if w not in inside:
                    continue
                if w == start:
                    path = [v]
                    while prev[path[-1]] is not None:
                        path.append(prev[path[-1]])
                    path.reverse()
                    return path + [start]
                if w not in prev:
                    prev[w] = v
                    nxt.append(w)
        queue = nxt
    return [start]


def main(argv):
    if len(argv) < 3:
        print("usage:\n" + "\n".join(__doc__.strip().splitlines()[-3:]), file=sys.stderr)
        return 2
    global ROOT
    build, folders, pipelines = argv[1], [], {}
    for arg in argv[2:]:
        folder, _, stages = arg.partition("=")
        folders.append(folder)
        if stages:
            pipelines[os.path.normpath(folder)] = stages.split(",")
    ROOT = source_root(build)
    chosen, built = {}, all_objects(build)
    for folder in folders:
        found = objects(built, folder)
        if not found:
            print("check_call_cycles: no objects of %s under %s (not built?)" % (folder, build),
                  file=sys.stderr)
            return 2
        chosen.update(found)
    syms = symbols(sorted(o for objs in chosen.values() for o in objs))
    files = {}
    for src, objs in chosen.items():
        defined, used = set(), set()
        for o in objs:  # one file built into several targets: the same file
            defined |= syms[o][0]
            used |= syms[o][1]
        files[src] = (defined, used - defined)
    edges = graph(files)
    comps = strong_components(edges)
    for comp in comps:
        cycle = one_cycle(edges, comp)
        steps = ["%s -> %s (%s)" % (a, b, ", ".join(edges[a][b][:3]) +
                                       (", ..." if len(edges[a][b]) > 3 else ""))
                 for a, b in zip(cycle, cycle[1:])]
        print("FAIL: call cycle among %s:\n  %s" % (", ".join(comp), "\n  ".join(steps)),
              file=sys.stderr)
    late = 0
    for folder, stages in sorted(pipelines.items()):
        late += stage_order(folder, stages, edges)
    print("%d call cycle(s) among %d files of %s%s" % (len(comps), len(files), " ".join(folders),
          "; %d use(s) of a later stage" % late if pipelines else ""))
    return 1 if comps or late else 0


INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def stage_order(folder, stages, edges):
    """The uses, by symbol and by #include, of a later stage by an earlier
    one, printed; how many."""
    def rank(path):
        rel = os.path.relpath(path, folder)
        if rel.startswith(".."):
            return None  # outside the pipeline
        top = rel.split(os.sep)[0]
        return stages.index(top) if top in stages else len(stages)

    for s in stages:
        if not os.path.isdir(os.path.join(ROOT, folder, s)):
            print("check_call_cycles: %s has no stage %s" % (folder, s), file=sys.stderr)
            return 1
    headers = {}  # a header's name -> its path, the folder's own
    for top, _, names in os.walk(os.path.join(ROOT, folder)):
        for n in names:
            if n.endswith(".h"):
                headers[n] = os.path.relpath(os.path.join(top, n), ROOT)
    bad = 0
    for f in sorted(edges):
        rf = rank(f)
        if rf is None:
            continue
        for g, names in sorted(edges[f].items()):
            rg = rank(g)
            if rg is not None and rg > rf:
                print("FAIL: %s (stage %s) uses %s (stage %s): %s" % (
                    f, stages[rf] if rf < len(stages) else "pipeline", g,
                    stages[rg] if rg < len(stages) else "pipeline", ", ".join(names[:3])),
                    file=sys.stderr)
                bad += 1
    for top, _, names in os.walk(os.path.join(ROOT, folder)):
        for n in sorted(names):
            if not n.endswith((".c", ".h")):
                continue
            path = os.path.relpath(os.path.join(top, n), ROOT)
            rf = rank(path)
            for inc in INCLUDE.findall(code_of(os.path.join(ROOT, path), strings=True)):
                h = headers.get(os.path.basename(inc)) if "/" not in inc else None
                if h is None:
                    continue
                rh = rank(h)
                if rh == len(stages):
                    continue  # the folder's interface: its types and codes
                if rh > rf:
                    print("FAIL: %s (stage %s) includes %s (stage %s)" % (
                        path, stages[rf] if rf < len(stages) else "pipeline", h,
                        stages[rh] if rh < len(stages) else "pipeline"), file=sys.stderr)
                    bad += 1
    return bad


if __name__ == "__main__":
    sys.exit(main(sys.argv))
