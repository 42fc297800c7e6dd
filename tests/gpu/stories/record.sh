#!/usr/bin/env bash
# Records the traces the analysis tests keep (tests/data/): builds gpuprof,
# then traces each story in the default mode. OUT: where traces and each
# program's output go.
set -u
root=$(cd "$(dirname "$0")/../../.." && pwd)
cd "$root"
out=${OUT:?}/traces
mkdir -p "$out"
if ! pkg-config --exists json-c 2>/dev/null; then
	dst=$root/.deps/root; mkdir -p "$dst"
	for d in "$root"/.deps/debs/*.deb; do dpkg -x "$d" "$dst"; done
	pc=$dst/usr/lib/x86_64-linux-gnu/pkgconfig
	sed -i "s|=/usr|=$dst/usr|" "$pc/json-c.pc"
	export PKG_CONFIG_PATH=$pc LD_LIBRARY_PATH=$dst/usr/lib/x86_64-linux-gnu
fi
b=$root/build/gpu
{ cmake -S . -B "$b" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CUDA_ARCHITECTURES=native && cmake --build "$b" -j"$(nproc)"; } >"$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
gp=$b/viewer/gpuprof
rec() { # name program args...
	local n=$1; shift
	"$gp" --trace --force -o "$out/$n.h100.json.gz" "$@" >"$out/$n.out" 2>"$out/$n.err"
	echo "$n rc=$? $(grep -h GPUPROF_TORCH_EXPECT "$out/$n.out" | head -1)"
}
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader > "$out/gpu.txt"
python3 -c 'import torch,sys; print(torch.__version__, sys.version.split()[0])' >> "$out/gpu.txt"
rec conv_doubling python3 tests/gpu/stories/conv_doubling.py
rec inference_grad python3 samples/pytorch/inference_no_grad.py --variant grad
rec inference_nograd python3 samples/pytorch/inference_no_grad.py --variant nograd
rec frag_default python3 samples/pytorch/fragmentation.py --variant default
rec frag_expandable python3 samples/pytorch/fragmentation.py --variant expandable
rec leak_gpu20 python3 samples/pytorch/outputs_list_leak.py --variant gpu --steps 20
ls -la "$out"
tar -C "$OUT" -czf "$OUT/traces.tgz" traces
