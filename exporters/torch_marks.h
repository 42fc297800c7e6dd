/* The PyTorch hooks' memory marks (TRACE_FORMAT.md: gpuprof:torch.memory,
 * gpuprof:torch.history, and the names of tensors, gpuprof:torch.tensor) as
 * their readers take them: the recorder,
 * which draws them as counter tracks (profiler/torch_counters.c), and
 * gpuprof analyze (viewer/analyze/read/history.c, marks.c). One set of names and
 * limits, so that a mark one of them refuses the other refuses too. */
#ifndef GPUPROF_TORCH_MARKS_H
#define GPUPROF_TORCH_MARKS_H

#define GP_TORCH_MEMORY_PREFIX "gpuprof:torch.memory "
#define GP_TORCH_HISTORY_PREFIX "gpuprof:torch.history "
/* "gpuprof:torch.tensor 0xADDR NBYTES LAYER": a parameter's or optimizer
 * state's tensor and its module (gpuprof_torch.py writes, marks.c reads) */
#define GP_TORCH_TENSOR_PREFIX "gpuprof:torch.tensor "
/* "gpuprof:torch.param 0xADDR NBYTES LAYER": the same for a parameter whose
 * whole tensor a sharding library gathered for its module's forward or
 * backward (FSDP2's all-gather outputs): made inside the module, it holds a
 * parameter all the same */
#define GP_TORCH_PARAM_PREFIX "gpuprof:torch.param "
/* The hooks' NVTX ranges of a module's forward (pushed on the calling
 * thread) and backward (started and ended on autograd's): "fwd:<path>",
 * "bwd:<path>". The recorder tells the allocator hook whether a thread is
 * inside a forward range (nvtx_inject.c), analyze names layers after them. */
#define GP_TORCH_FWD_PREFIX "fwd:"
#define GP_TORCH_BWD_PREFIX "bwd:"
#define GP_TORCH_RANGE_PREFIX_LEN 4

#define GP_TORCH_MAX_BYTES (1ll << 50)            /* allocated, reserved */
#define GP_TORCH_MAX_UNIX_US 4000000000000000ll     /* a point's time: year 2096 */
#define GP_TORCH_MAX_UNIX_NS 4000000000000000000ll  /* unix_ns */
#define GP_TORCH_MAX_DT_US 1000000000000ll          /* 11.6 days between two points */
#define GP_TORCH_MAX_PARTS 100000000ll

#endif
