"""--torch-history (native mode): PyTorch's caching allocator keeps a history
of its own allocations, frees and segments, and at exit gpuprof writes it
into the trace as `gpuprof:torch.history` marks (exporters/TRACE_FORMAT.md):
PyTorch's allocated bytes after every allocation and free, inside the
reserved segments, on the trace's timeline. Without it native mode has only
samples of them (`gpuprof:torch.memory`), and fragmentation between two
samples is not seen.

Cost: PyTorch's torch.cuda.memory._record_memory_history without stacks
(context=None): each allocation and free appends an entry to a ring under the
allocator's lock, no Python and no GIL; frees' completions are skipped where
PyTorch can (skip_actions, 2.10 and later). Turning it into marks costs about
1 us and 0.5 KiB of passing host memory per entry, once, at exit
(bench/RESULTS.md, cost). The ring holds GPUPROF_TORCH_HISTORY_ENTRIES
entries (default 1000000, about 300 steps of GPT-2 small); a longer run
keeps the last ones, and the marks say so."""
import os
import time

DEFAULT_ENTRIES = 1000000
MAX_ENTRIES = 16000000  # the analyzer takes at most 2^24 points a process
MARK_BYTES = 60000      # the recorder cuts NVTX messages at 65535 bytes

ALLOCATED = {"alloc": 1, "free_requested": -1}
RESERVED = {"segment_alloc": 1, "segment_map": 1, "segment_free": -1, "segment_unmap": -1}


def entries_wanted(env):
    """The ring's size from GPUPROF_TORCH_HISTORY_ENTRIES; None if unusable."""
    v = env.get("GPUPROF_TORCH_HISTORY_ENTRIES", "")
    if not v:
        return DEFAULT_ENTRIES
    if not v.isdigit() or not 0 < int(v) <= MAX_ENTRIES:
        return None
    return int(v)


def deltas(trace):
    """(time_us, d_allocated, d_reserved) of each entry that changes PyTorch's
    allocated bytes (requested bytes, as memory_stats' requested_bytes counts
    them: up at alloc, down at free_requested) or its reserved bytes
    (segments)."""
    for e in trace:
        a = e["action"]
        s = ALLOCATED.get(a)
        if s is not None:
            yield e["time_us"], s * e["size"], 0
            continue
        s = RESERVED.get(a)
        if s is not None:
            yield e["time_us"], 0, s * e["size"]


def state_at_end(segments, device):
    """(allocated, reserved) of device from the snapshot's segments: the sums
    the history must end at. Allocated counts requested bytes of live blocks
    (not those whose free waits for a stream: free_requested took them off)."""
    res = alloc = 0
    for seg in segments:
        if seg.get("device", 0) != device:
            continue
        res += seg["total_size"]
        for b in seg["blocks"]:
            if b["state"] == "active_allocated":
                alloc += b["requested_size"]
    return alloc, res


def marks(device, trace, end, wrapped):
    """The history of one device as mark texts of at most MARK_BYTES, each to
    be finished by finish() as it is marked. The points are absolute
    (allocated, reserved): the history is anchored at its end, so a ring that
    dropped its oldest entries, or a history started after allocations were
    made, still gives exact values. Returns (texts, problem): problem is a
    string, and texts empty, when the history does not add up (it would go
    below zero)."""
    alloc, res = end
    for _, da, dr in deltas(trace):
        alloc -= da
        res -= dr
    if alloc < 0 or res < 0:
        return [], ("device %d's history does not add up to the allocator's state at exit "
                    "(%d allocated, %d reserved before it)" % (device, alloc, res))
    complete = not wrapped and alloc == 0 and res == 0
    texts, part, pts, size, t0, last = [], 0, [], 0, None, None

    def flush(final):
        texts.append('gpuprof:torch.history {"device": %d, "part": %d, "last": %s, '
                     '"complete": %s, "t0_us": %d, "p": [%s]' % (
                         device, part, "true" if final else "false",
                         "true" if complete else "false", t0 if t0 is not None else 0,
                         ", ".join(pts)))

    held = None  # the time of a new segment not yet shown
    for t, da, dr in deltas(trace):
        alloc += da
        res += dr
        if dr > 0 and not da:
            # A new segment is made inside the allocation that needs it and
            # shown with it: a point between the two would be a gap of
            # fragmentation that never existed between two calls.
            held = t
            continue
        held = None
        if t0 is None:
            t0 = last = t
        pt = "%d, %d, %d" % (max(t - last, 0), alloc, res)
        if size + len(pt) + 2 > MARK_BYTES and pts:
            flush(False)
            part += 1
            pts, size, t0 = [], 0, t
            pt = "0, %d, %d" % (alloc, res)
        pts.append(pt)
        size += len(pt) + 2
        last = max(last, t)
    if held is not None:  # the last change was a segment (nothing used it)
        if t0 is None:
            t0 = last = held
        pts.append("%d, %d, %d" % (max(held - last, 0), alloc, res))
    flush(True)
    return texts, None


def finish(text, unix_ns):
    """A mark text with the wall-clock time it is marked at, which the
    analyzer matches with the mark's own timestamp to place the points
    (PyTorch's time_us is Unix time) on the trace's clock."""
    return text + ', "unix_ns": %d}' % unix_ns


class History:
    """Turns the allocator's history on at the program's own CUDA start and
    writes it at exit. say: one stderr line; mark: an NVTX mark."""

    def __init__(self, torch, say, mark, env=os.environ):
        self.torch, self.say, self.mark = torch, say, mark
        self.entries = entries_wanted(env)
        self.on = False

    def start(self):
        if self.entries is None:
            self.say("--torch-history: GPUPROF_TORCH_HISTORY_ENTRIES must be 1 to %d; "
                     "history not recorded" % MAX_ENTRIES)
            return
        # Asking now would initialise CUDA before the program does (and
        # before a DataLoader forks): queued, it runs inside the program's
        # own first CUDA call, or now if CUDA is already up.
        self.torch.cuda._lazy_call(self._enable)

    def _enable(self):
        # runs inside torch.cuda's initialisation: must not raise
        try:
            kw = dict(enabled="all", context=None, stacks="python", max_entries=self.entries)
            try:
                self.torch.cuda.memory._record_memory_history(skip_actions=["free_completed"], **kw)
            except TypeError:  # PyTorch before 2.10
                self.torch.cuda.memory._record_memory_history(**kw)
            self.on = True
        except Exception as e:
            self.say("--torch-history: PyTorch's allocator history not recorded (%r)" % (e,))

    def write(self):
        """At exit: every device's history as marks."""
        if not self.on:
            return
        try:
            snap = self.torch.cuda.memory._snapshot()
            for dev, trace in enumerate(snap["device_traces"]):
                if not trace:
                    continue
                end = state_at_end(snap["segments"], dev)
                wrapped = len(trace) >= self.entries
                texts, problem = marks(dev, trace, end, wrapped)
                if problem:
                    self.say("--torch-history: %s; not written" % problem)
                    continue
                if wrapped:
                    self.say("--torch-history: device %d's history holds only the last %d "
                             "allocations and frees (GPUPROF_TORCH_HISTORY_ENTRIES)" %
                             (dev, self.entries))
                for t in texts:
                    self.mark(finish(t, time.time_ns()))
        except Exception as e:
            self.say("--torch-history: PyTorch's allocator history not written (%r)" % (e,))
