"""Writes tests/analyze/bad/: inputs `gpuprof analyze` must refuse with one
line on stderr and exit status 2 (test_analyze.py `bad`), and on which the
reader's fuzz harness must not crash (fuzz_corpus, in the sanitizer build).
Inputs too large to keep in the repository (a 65 MiB line, 100000 levels of
nesting, byte counts that overflow) are made by fuzz_corpus.c and
test_analyze.py themselves.

  python3 make_bad_corpus.py [DIR]     (default: bad/ beside this file)
"""
import gzip
import json
import os
import random
import sys
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "exporters"))
from trace_format import CAT, EV, F, FORMAT, KIND, T  # noqa: E402  (the names of the trace)


def line(*members):
    """One event line of (key, value) members, in that order, as the
    recorder writes it (no spaces)."""
    return json.dumps(dict(members), separators=(",", ":"))


def event(ev, pid, tid, ts, args):
    """A complete event of the definition's ev."""
    return line((T.PH, ev.ph), (T.S, ev.scope), (T.NAME, ev.name), (T.CAT, ev.cat), (T.PID, pid),
                (T.TID, tid), (T.TS, ts), (T.ARGS, args))


def member(key, text):
    """A member as it appears in an event line, its value already JSON (or
    deliberately not)."""
    return '"%s":%s' % (key, text)


def meta(over=None):
    args = {F.FORMAT: FORMAT, F.VERSION: "0.1.0", F.PID: 77, F.PPID: 1, F.CMDLINE: "x",
            F.HOSTNAME: "h", F.START_UNIX_NS: 1, F.TS_BASE_NS: 1000, F.CLOCK: "cupti",
            F.MODE: "cuda", F.GPU_PID_BASE: 1000007700}
    args.update(over or {})
    return event(EV.META, 77, 0, 0.0, args)


def alloc(over=None):
    args = {F.ADDR: "0x7f0000000000", F.BYTES: 4096, F.KIND: KIND.DEVICE, F.DEVICE: 0,
            F.STREAM: -1, F.CORR: 1, F.ASYNC: False}
    args.update(over or {})
    return event(EV.ALLOC, 1000007700, 0, 1.5, args)


END = event(EV.END, 77, 0, 9.0, {})


def nccl(pid=1000007700, dur="5.0", corr="3"):
    """An NCCL kernel (a collective: read, not skipped) as the recorder
    writes it, its members' values JSON as given."""
    return ('{"ph":"X","name":"ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)",'
            '"cat":"kernel","pid":%s,"tid":13,"ts":2.0,"dur":%s,"args":{"corr":%s,"grid":[1,1,1],'
            '"block":[512,1,1],"smem_static":0,"smem_dynamic":0,"regs":32}}' % (pid, dur, corr))


def trace(*lines):
    return ("[\n" + ",\n".join(lines) + "\n]\n").encode()


def cut_in_name(data):
    """data up to two letters before the end of gpuprof.meta's name."""
    name = EV.META.name.encode()
    return data[:data.index(name) + len(name) - 2]


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "bad")
    os.makedirs(out, exist_ok=True)
    rng = random.Random(42)
    gz_ok = gzip.compress(trace(meta(), alloc(), END), mtime=0)
    # Event lines that are not JSON (bad bytes, escapes, commas, quotes) are
    # spelled out: no encoder writes them.
    cases = {
        "empty": b"",
        "text.txt": b"hello world\n",
        "binary.bin": bytes(rng.randrange(256) for _ in range(4096)),
        "gzip_of_text.gz": gzip.compress(b"not json at all\n" * 10, mtime=0),
        "gzip_header_only.gz": gz_ok[:10],
        "gzip_corrupt.gz": gz_ok[:12] + bytes(b ^ 0x5A for b in gz_ok[12:40]) + gz_ok[40:],
        "first_event_not_meta.json": trace(alloc(), END),
        "format_2.json": trace(meta({F.FORMAT: 2}), END),
        "meta_wrong_type.json": trace(meta({F.TS_BASE_NS: "abc"}), END),
        "meta_statics_unknown.json": trace(meta({F.STATICS: "sometimes"}), END),
        "bytes_negative.json": trace(meta(), alloc({F.BYTES: -5}), END),
        "bytes_1e300.json": trace(meta(), alloc().replace(member(F.BYTES, "4096"), member(F.BYTES, "1e300")), END),
        "bytes_string.json": trace(meta(), alloc({F.BYTES: "12"}), END),
        "bytes_absurd.json": trace(meta(), alloc({F.BYTES: 1 << 60}), END),
        "bytes_u64_overflow.json": trace(meta(), alloc().replace(member(F.BYTES, "4096"),
                                                                 member(F.BYTES, "123456789012345678901234567890")), END),
        "addr_number.json": trace(meta(), alloc({F.ADDR: 12345}), END),
        "addr_not_hex.json": trace(meta(), alloc({F.ADDR: "0xZZ"}), END),
        "device_absurd.json": trace(meta(), alloc({F.DEVICE: 99999}), END),
        "bad_json_in_the_middle.json": trace(meta(), '{"ph":"i","name":"alloc",,}', alloc(), END),
        "nan.json": trace(meta(), alloc().replace(member(T.TS, "1.5"), member(T.TS, "NaN")), END),
        "bad_utf8.json": b"[\n" + meta().encode() + b',\n{"ph":"B","name":"a\xff\xfeb","cat":"nvtx","pid":77,"tid":5,"ts":1.0}\n]\n',
        "ts_absurd.json": trace(meta(), alloc().replace(member(T.TS, "1.5"), member(T.TS, "1e20")), END),
        "second_meta.json": trace(meta(), alloc(), meta(), END),
        "text_after_close.json": trace(meta(), END) + b"{}\n",
        "deep_nesting.json": trace(meta(), alloc().replace(member(F.ASYNC, "false"), member("x", "[" * 100 + "]" * 100)), END),
        "unterminated_string.json": trace(meta(), '{"ph":"B","name":"abc,"cat":"nvtx"}', alloc(), END),
        "ph_missing.json": trace(meta(), line((T.NAME, EV.ALLOC.name), (T.CAT, CAT.MEMORY), (T.TS, 1.0), (T.ARGS, {})), END),
        "args_not_object.json": trace(meta(), line((T.PH, EV.ALLOC.ph), (T.NAME, EV.ALLOC.name), (T.CAT, CAT.MEMORY),
                                                    (T.TS, 1.0), (T.ARGS, [1, 2])), END),
        "one_line_array.json": ("[" + meta() + "," + alloc() + "," + END + "]\n").encode(),
        "bom.json": b"\xef\xbb\xbf" + trace(meta(), END),
        "control_char.json": trace(meta(), '{"ph":"B","name":"a\tb","cat":"nvtx","pid":77,"tid":5,"ts":1.0}', END),
        "nul_byte.json": trace(meta(), END).replace(b'"x"', b'"x\x00"'),
        "bad_escape.json": trace(meta(), '{"ph":"B","name":"a\\xb","cat":"nvtx","pid":77,"tid":5,"ts":1.0}', END),
        "oom_bad_bytes.json": trace(meta(), event(EV.OOM, 77, 5, 2.0, {F.API: "cudaMalloc", F.BYTES: "lots", F.DEVICE: 0}),
                                    END),
        "nvtx_without_tid.json": trace(meta(), line((T.PH, EV.NVTX_PUSH.ph), (T.NAME, "r"), (T.CAT, CAT.NVTX), (T.PID, 77),
                                                     (T.TS, 1.0)), END),
        "meta_cut_short.json": cut_in_name(b"[\n" + meta().encode()),
        "not_an_array.json": b'{"traceEvents":[]}\n',
        "ts_string.json": trace(meta(), alloc().replace(member(T.TS, "1.5"), member(T.TS, '"1.5"')), END),
        "gzip_in_gzip.gz": gzip.compress(gz_ok, mtime=0),
        "trailing_comma_object.json": trace(meta(), '{"ph":"i","name":"x",}', END),
        "leading_zero.json": trace(meta(), alloc().replace(member(F.BYTES, "4096"), member(F.BYTES, "04096")), END),
        "raw_deflate.z": zlib.compress(trace(meta(), END)),
        # a collective's kernel on a track that is none of the process's GPUs
        "nccl_kernel_foreign_pid.json": trace(meta(), alloc(), nccl(pid=1000008800), END),
        "nccl_kernel_negative_dur.json": trace(meta(), alloc(), nccl(dur="-1.0"), END),
        "nccl_kernel_corr_string.json": trace(meta(), alloc(), nccl(corr='"3"'), END),
    }
    for name, data in cases.items():
        with open(os.path.join(out, name), "wb") as f:
            f.write(data)
    print("%d inputs in %s" % (len(cases), out))


if __name__ == "__main__":
    main()
