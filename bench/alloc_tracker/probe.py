"""probe.py MODE [STEPS]: GPT-2 small training steps (tests/torch/train_models.py)
in one of three ways, and one PROBE line: the median synced step, PyTorch's
peaks, and with a tracker what it was handed.
  plain          nothing attached
  tracker        shim.cpp's tracker attached (GPUPROF_TRACKER_PROBE_LIB, run.sh builds it)
  tracker_timed  the same, timing its own callback
  history        torch.cuda.memory._record_memory_history(), no stacks
The tracker sums ALLOC - FREE_REQUESTED sizes (its running peak: what the
entries' sizes add up to) and SEGMENT_ALLOC/MAP - SEGMENT_FREE/UNMAP."""
import ctypes
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tests", "torch"))
import torch  # noqa: E402
import train_models as tm  # noqa: E402

mode = sys.argv[1]
steps = int(sys.argv[2]) if len(sys.argv) > 2 else 12
lib = None
if mode in ("tracker", "tracker_timed"):
    lib = ctypes.CDLL(os.environ["GPUPROF_TRACKER_PROBE_LIB"], mode=ctypes.RTLD_GLOBAL)
    lib.probe_val.restype = ctypes.c_longlong
    torch.cuda.init()
    lib.probe_attach(1 if mode == "tracker_timed" else 0)
if mode == "history":
    torch.cuda.memory._record_memory_history(max_entries=1000000)
step = tm.build("gpt2")
for _ in range(3):
    step()
    torch.cuda.synchronize()
torch.cuda.reset_peak_memory_stats()
ts = []
for _ in range(steps):
    ts.append(tm.timed_step(step)[0])
r = dict(mode=mode, median_ms=round(statistics.median(ts), 2),
         max_alloc=torch.cuda.max_memory_allocated(), max_res=torch.cuda.max_memory_reserved(),
         cur_alloc=torch.cuda.memory_allocated(), cur_res=torch.cuda.memory_reserved())
if lib:
    # TraceEntry::Action, in its order
    names = ["ALLOC", "FREE_REQUESTED", "FREE_COMPLETED", "SEGMENT_ALLOC", "SEGMENT_FREE",
             "SEGMENT_MAP", "SEGMENT_UNMAP", "SNAPSHOT", "OOM", "USER_DEFINED"]
    r["counts"] = {n: lib.probe_count(i) for i, n in enumerate(names) if lib.probe_count(i)}
    r["tracker_cur"] = lib.probe_val(0)
    r["tracker_peak_since_start"] = lib.probe_val(1)
    r["tracker_seg"] = lib.probe_val(2)
    r["tracker_segpeak"] = lib.probe_val(3)
    r["cb_ns_total"] = lib.probe_val(4)
print("PROBE", r, flush=True)
