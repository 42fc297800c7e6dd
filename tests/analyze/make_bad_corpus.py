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


def meta(**over):
    args = {"format": 1, "version": "0.1.0", "pid": 77, "ppid": 1, "cmdline": "x", "hostname": "h",
            "start_unix_ns": 1, "ts_base_ns": 1000, "clock": "cupti", "mode": "cuda",
            "gpu_pid_base": 1000007700}
    args.update(over)
    return json.dumps({"ph": "i", "s": "g", "name": "gpuprof.meta", "cat": "gpuprof", "pid": 77,
                       "tid": 0, "ts": 0.0, "args": args}, separators=(",", ":"))


def alloc(**over):
    args = {"addr": "0x7f0000000000", "bytes": 4096, "kind": "device", "device": 0, "stream": -1,
            "corr": 1, "async": False}
    args.update(over)
    return json.dumps({"ph": "i", "s": "t", "name": "alloc", "cat": "memory", "pid": 1000007700,
                       "tid": 0, "ts": 1.5, "args": args}, separators=(",", ":"))


END = '{"ph":"i","s":"g","name":"gpuprof.end","cat":"gpuprof","pid":77,"tid":0,"ts":9.0,"args":{}}'


def trace(*lines):
    return ("[\n" + ",\n".join(lines) + "\n]\n").encode()


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "bad")
    os.makedirs(out, exist_ok=True)
    rng = random.Random(42)
    gz_ok = gzip.compress(trace(meta(), alloc(), END), mtime=0)
    cases = {
        "empty": b"",
        "text.txt": b"hello world\n",
        "binary.bin": bytes(rng.randrange(256) for _ in range(4096)),
        "gzip_of_text.gz": gzip.compress(b"not json at all\n" * 10, mtime=0),
        "gzip_header_only.gz": gz_ok[:10],
        "gzip_corrupt.gz": gz_ok[:12] + bytes(b ^ 0x5A for b in gz_ok[12:40]) + gz_ok[40:],
        "first_event_not_meta.json": trace(alloc(), END),
        "format_2.json": trace(meta(format=2), END),
        "meta_wrong_type.json": trace(meta(ts_base_ns="abc"), END),
        "meta_statics_unknown.json": trace(meta(statics="sometimes"), END),
        "bytes_negative.json": trace(meta(), alloc(bytes=-5), END),
        "bytes_1e300.json": trace(meta(), alloc().replace('"bytes":4096', '"bytes":1e300'), END),
        "bytes_string.json": trace(meta(), alloc(bytes="12"), END),
        "bytes_absurd.json": trace(meta(), alloc(bytes=1 << 60), END),
        "bytes_u64_overflow.json": trace(meta(), alloc().replace('"bytes":4096',
                                                                 '"bytes":123456789012345678901234567890'), END),
        "addr_number.json": trace(meta(), alloc(addr=12345), END),
        "addr_not_hex.json": trace(meta(), alloc(addr="0xZZ"), END),
        "device_absurd.json": trace(meta(), alloc(device=99999), END),
        "bad_json_in_the_middle.json": trace(meta(), '{"ph":"i","name":"alloc",,}', alloc(), END),
        "nan.json": trace(meta(), alloc().replace('"ts":1.5', '"ts":NaN'), END),
        "bad_utf8.json": b"[\n" + meta().encode() + b',\n{"ph":"B","name":"a\xff\xfeb","cat":"nvtx","pid":77,"tid":5,"ts":1.0}\n]\n',
        "ts_absurd.json": trace(meta(), alloc().replace('"ts":1.5', '"ts":1e20'), END),
        "second_meta.json": trace(meta(), alloc(), meta(), END),
        "text_after_close.json": trace(meta(), END) + b"{}\n",
        "deep_nesting.json": trace(meta(), alloc().replace('"async":false', '"x":' + "[" * 100 + "]" * 100), END),
        "unterminated_string.json": trace(meta(), '{"ph":"B","name":"abc,"cat":"nvtx"}', alloc(), END),
        "ph_missing.json": trace(meta(), '{"name":"alloc","cat":"memory","ts":1.0,"args":{}}', END),
        "args_not_object.json": trace(meta(), '{"ph":"i","name":"alloc","cat":"memory","ts":1.0,"args":[1,2]}', END),
        "one_line_array.json": ("[" + meta() + "," + alloc() + "," + END + "]\n").encode(),
        "bom.json": b"\xef\xbb\xbf" + trace(meta(), END),
        "control_char.json": trace(meta(), '{"ph":"B","name":"a\tb","cat":"nvtx","pid":77,"tid":5,"ts":1.0}', END),
        "nul_byte.json": trace(meta(), END).replace(b'"x"', b'"x\x00"'),
        "bad_escape.json": trace(meta(), '{"ph":"B","name":"a\\xb","cat":"nvtx","pid":77,"tid":5,"ts":1.0}', END),
        "oom_bad_bytes.json": trace(meta(), '{"ph":"i","s":"p","name":"oom","cat":"memory","pid":77,"tid":5,"ts":2.0,"args":{"api":"cudaMalloc","bytes":"lots","device":0}}', END),
        "nvtx_without_tid.json": trace(meta(), '{"ph":"B","name":"r","cat":"nvtx","pid":77,"ts":1.0}', END),
        "meta_cut_short.json": b'[\n{"ph":"i","s":"g","name":"gpuprof.me',
        "not_an_array.json": b'{"traceEvents":[]}\n',
        "ts_string.json": trace(meta(), alloc().replace('"ts":1.5', '"ts":"1.5"'), END),
        "gzip_in_gzip.gz": gzip.compress(gz_ok, mtime=0),
        "trailing_comma_object.json": trace(meta(), '{"ph":"i","name":"x",}', END),
        "leading_zero.json": trace(meta(), alloc().replace('"bytes":4096', '"bytes":04096'), END),
        "raw_deflate.z": zlib.compress(trace(meta(), END)),
    }
    for name, data in cases.items():
        with open(os.path.join(out, name), "wb") as f:
            f.write(data)
    print("%d inputs in %s" % (len(cases), out))


if __name__ == "__main__":
    main()
